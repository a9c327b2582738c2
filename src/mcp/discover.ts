/**
 * Live discovery of a server's catalog (interface §2.12 "captured by live discovery at
 * link time, never supplied"; §3.3; decisions row 42).
 *
 * `tools/list` is paged by the server; the SDK hands back one page and a `nextCursor`, so
 * this module follows the cursors to the end. A server that pages forever (a cursor it
 * already gave, or more pages than any honest catalog needs) is unreadable, not a reason
 * to hang: the guard answers an upstream failure long before the deadline would.
 *
 * A catalog past the bounds of `catalog-bounds.ts` (tools, bytes, names, schemas) is
 * refused whole with a 502 naming the limit or rule; nothing of it is kept.
 */
import type { Clock } from '../clock.ts';
import { UpstreamFailure } from '../errors.ts';
import { catalogDigest, catalogTool, sortTools } from './catalog.ts';
import type { CatalogTool } from '../schemas/connections.ts';
import type { DiscoveredCatalog } from './catalog.ts';
import {
  MAX_CATALOG_BYTES,
  MAX_CATALOG_TOOLS,
  MAX_DISCOVERY_BYTES,
  catalogProblem,
  toolBytes,
} from './catalog-bounds.ts';
import { endpointLabel, parseEndpoint } from './failures.ts';
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
 *   or `upstream_authorization_failed`, the message naming the endpoint;
 *   `upstream_catalog_too_large` naming the limit; `upstream_refused` (`EndpointRefused`)
 *   when the egress guard refused a request.
 */
export async function discoverCatalog(options: DiscoverOptions): Promise<DiscoveredCatalog> {
  try {
    return await withMcpSession({ maxResponseBytes: MAX_DISCOVERY_BYTES, ...options }, (session) =>
      discover(session, options),
    );
  } catch (error) {
    // The exchange hit its byte cap mid-answer: the catalog is what was too large.
    if (error instanceof UpstreamFailure && error.code === 'upstream_too_large') {
      throw tooLarge(
        endpointLabel(parseEndpoint(options.endpoint)),
        `its answers exceed ${MAX_CATALOG_BYTES} bytes (2 MiB), the limit`,
      );
    }
    throw error;
  }
}

async function discover(session: McpSession, options: DiscoverOptions): Promise<DiscoveredCatalog> {
  const tools = await listAllTools(session, options.maxPages ?? MAX_TOOL_PAGES);
  const problem = catalogProblem(tools);
  if (problem !== undefined) {
    if (problem.detail !== undefined) {
      session.report({ detail: problem.detail }, 'MCP server offered a catalog out of bounds');
    }
    throw unreadable(session, problem.reason);
  }
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
}

async function listAllTools(session: McpSession, maxPages: number): Promise<CatalogTool[]> {
  const tools: CatalogTool[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  let bytes = 0;
  for (let page = 1; ; page += 1) {
    const result = await session.client.listTools(
      cursor === undefined ? {} : { cursor },
      session.request,
    );
    tools.push(...result.tools.map(catalogTool));
    bytes += toolBytes(result.tools);
    if (tools.length > MAX_CATALOG_TOOLS) {
      throw tooLarge(session.label, `it lists more than ${MAX_CATALOG_TOOLS} tools, the limit`);
    }
    if (bytes > MAX_CATALOG_BYTES) {
      throw tooLarge(
        session.label,
        `its tools take more than ${MAX_CATALOG_BYTES} bytes (2 MiB), the limit`,
      );
    }
    cursor = result.nextCursor;
    if (cursor === undefined) return tools;
    if (seen.has(cursor)) {
      session.report({ cursor: cursor.slice(0, 200) }, 'MCP server repeated a tools/list cursor');
      throw unreadable(session, 'tools/list repeated a cursor it gave before');
    }
    if (page >= maxPages) {
      throw unreadable(session, `tools/list still had more after ${maxPages} pages`);
    }
    seen.add(cursor);
  }
}

function tooLarge(label: string, reason: string): UpstreamFailure {
  return new UpstreamFailure(
    'upstream_catalog_too_large',
    `MCP server at ${label} offers a catalog over the service's bounds: ${reason}`,
  );
}

function unreadable(session: McpSession, reason: string): UpstreamFailure {
  return new UpstreamFailure(
    'upstream_unreadable',
    `MCP server at ${session.label} gave an unreadable catalog: ${reason}`,
  );
}
