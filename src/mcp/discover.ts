/**
 * Live discovery of a server's catalog (interface §2.12 "captured by live discovery at
 * link time, never supplied"; §3.3; decisions row 42).
 *
 * `tools/list` is paged by the server; the SDK hands back one page and a `nextCursor`, so
 * this module follows the cursors to the end. A server that pages forever (a cursor it
 * already gave, or more pages than any honest catalog needs) is unreadable, not a reason
 * to hang: the guard answers an upstream failure long before the deadline would.
 */
import type { Clock } from '../clock.ts';
import { UpstreamFailure } from '../errors.ts';
import { catalogDigest, catalogTool, sortTools } from './catalog.ts';
import type { Catalog, CatalogTool } from './catalog.ts';
import type { McpAccess, McpSession } from './session.ts';
import { withMcpSession } from './session.ts';

/** Pages one discovery follows at most; 100 pages of a server's usual page size is thousands of tools. */
export const MAX_TOOL_PAGES = 100;

/** What `discoverCatalog` needs beyond the access to the server. */
export interface DiscoverOptions extends McpAccess {
  /** Stamps `captured`. */
  readonly clock: Clock;
  /** Overrides `MAX_TOOL_PAGES` (tests). */
  readonly maxPages?: number;
}

/**
 * Connects to the server and captures its whole catalog.
 *
 * @throws AuthorizationRequired (an `UpstreamFailure`) when the server answers 401 and no
 *   OAuth provider could authorize: with a bearer, the credential was refused; with a
 *   provider, it now holds an authorize URL.
 * @throws UpstreamFailure `upstream_unreachable`, `upstream_timeout`, `upstream_unreadable`
 *   or `upstream_authorization_failed`, the message naming the endpoint.
 */
export async function discoverCatalog(options: DiscoverOptions): Promise<Catalog> {
  return withMcpSession(options, async (session) => {
    const tools = await listAllTools(session, options.maxPages ?? MAX_TOOL_PAGES);
    const sorted = sortTools(tools);
    if ('reason' in sorted) throw unreadable(session, sorted.reason);
    let digest: string;
    try {
      digest = catalogDigest(sorted.tools);
    } catch (error) {
      throw unreadable(session, error instanceof Error ? error.message : String(error));
    }
    const server = session.client.getServerVersion();
    return {
      tools: sorted.tools,
      digest,
      captured: options.clock.now(),
      serverInfo: { name: server?.name ?? '', version: server?.version ?? '' },
      protocolVersion: session.protocolVersion,
    };
  });
}

async function listAllTools(session: McpSession, maxPages: number): Promise<CatalogTool[]> {
  const tools: CatalogTool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; ; page += 1) {
    const result = await session.client.listTools(
      cursor === undefined ? {} : { cursor },
      session.request,
    );
    tools.push(...result.tools.map(catalogTool));
    cursor = result.nextCursor;
    if (cursor === undefined) return tools;
    if (seen.has(cursor)) {
      throw unreadable(session, `tools/list repeated the cursor ${JSON.stringify(cursor)}`);
    }
    if (page >= maxPages) {
      throw unreadable(session, `tools/list still had more after ${maxPages} pages`);
    }
    seen.add(cursor);
  }
}

function unreadable(session: McpSession, reason: string): UpstreamFailure {
  return new UpstreamFailure(
    'upstream_unreadable',
    `MCP server at ${session.label} gave an unreadable catalog: ${reason}`,
  );
}
