/**
 * The catalog check at session start (interface 3.1 row 1, 3.3 "session start checks the
 * server against the kept catalog", §7 POST /sessions; decisions row 47): every
 * connection the install's extra tools name is discovered live and its digest compared
 * with the one kept at link time. A changed digest (or a connection that is gone) is a
 * 409 `catalog_changed` naming the connections; a server that cannot be read, or a
 * connection still authorizing, is a 502. Conflicts outrank upstream failures (§7 order),
 * so one changed catalog answers 409 even when another could not be read.
 *
 * Access: a `bearer` connection sends the secret it names, `none` sends nothing, `oauth`
 * goes through the connection's OAuth client (`connectionProvider`) over the OAuth state
 * the connections flow keeps (`oauthStates`): its stored tokens, refreshed on a 401. A
 * token set that can no longer be refreshed leaves the connection needing authorization
 * again, and the open answers 502. Without `oauthStates` an OAuth connection reads as
 * unreadable (502) rather than unchecked.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Clock, Entropy } from '../clock.ts';
import type { CodeOf } from '../error-codes.ts';
import { Conflict, UpstreamFailure, isServiceError } from '../errors.ts';
import { discoverCatalog } from '../mcp/discover.ts';
import { Egress } from '../net/egress.ts';
import { connectionProvider } from '../mcp/oauth.ts';
import type { OAuthStateStore } from '../mcp/oauth-state.ts';
import type { ConnectionValue } from '../resources/types.ts';
import { DEFAULT_TIMEOUT_MS, parseDuration } from '../schemas/duration.ts';
import type { ExtraTool } from '../schemas/tenant.ts';
import type { ControlStore } from '../storage/control-store.ts';

export interface CatalogCheckOptions {
  readonly controlStore: ControlStore;
  readonly clock: Clock;
  /** Mints the `state` of an authorization the OAuth client may have to start. */
  readonly entropy: Entropy;
  /** The OAuth state of connections to one endpoint; absent, OAuth connections answer 502. */
  readonly oauthStates?: (endpoint: string) => OAuthStateStore;
  /** `BASE_URL`: the OAuth callback's origin, and where a browser returns by default. */
  readonly baseUrl: string;
  /** The egress guard; absent, one that allows no refused address. */
  readonly egress?: Egress;
}

/** How one connection compares. */
type Comparison =
  | { readonly connection: string; readonly check: 'unchanged' | 'changed' }
  | { readonly connection: string; readonly check: 'unreadable'; readonly error: UpstreamFailure };

/** How the service reaches a connection's server, or why it cannot. */
/** How a connection's server is reached, or why it cannot be. */
export type Access =
  | { readonly access: { bearer?: string; authProvider?: OAuthClientProvider } }
  | { readonly missing: string };

function unreadable(connection: string, code: CodeOf<502>, message: string): Comparison {
  return { connection, check: 'unreadable', error: new UpstreamFailure(code, message) };
}

/** The credential a connection sends (its bearer secret or its OAuth client). */
export async function accessOf(
  options: CatalogCheckOptions,
  tenant: string,
  connection: ConnectionValue,
): Promise<Access> {
  switch (connection.auth.kind) {
    case 'none':
      return { access: {} };
    case 'bearer': {
      const name = connection.auth.credential ?? '';
      const bearer = await options.controlStore.readSecretValue(tenant, name);
      // The value is a secret: it travels only as the bearer, never into a message.
      return bearer === null
        ? { missing: `the secret ${name} the connection sends is gone` }
        : { access: { bearer } };
    }
    case 'oauth':
      if (options.oauthStates === undefined) {
        return { missing: 'OAuth connections cannot be checked here' };
      }
      return {
        access: {
          authProvider: connectionProvider(
            {
              store: options.oauthStates(connection.endpoint),
              baseUrl: options.baseUrl,
              clock: options.clock,
              entropy: options.entropy,
            },
            {
              tenant,
              connection: connection.name,
              endpoint: connection.endpoint,
              returnTo: connection.return_to ?? options.baseUrl,
            },
          ),
        },
      };
  }
}

async function compare(
  options: CatalogCheckOptions,
  tenant: string,
  name: string,
): Promise<Comparison> {
  const stored = await options.controlStore.get('connection', tenant, name);
  // Gone since consent: what the install consented to no longer exists.
  if (stored === null) return { connection: name, check: 'changed' };
  const connection = stored.value;
  if (connection.state === 'authorizing' || connection.catalog === null) {
    return unreadable(
      name,
      'connection_authorizing',
      `connection ${name} is waiting for authorization; its catalog cannot be read`,
    );
  }
  const access = await accessOf(options, tenant, connection);
  if ('missing' in access) {
    return unreadable(name, 'upstream_unreadable', `connection ${name}: ${access.missing}`);
  }
  try {
    const live = await discoverCatalog({
      endpoint: connection.endpoint,
      timeoutMs:
        connection.timeout === null
          ? DEFAULT_TIMEOUT_MS
          : (parseDuration(connection.timeout) ?? DEFAULT_TIMEOUT_MS),
      clock: options.clock,
      egress: options.egress ?? new Egress(),
      ...access.access,
    });
    const same = live.digest === connection.catalog.digest;
    return { connection: name, check: same ? 'unchanged' : 'changed' };
  } catch (error) {
    if (error instanceof UpstreamFailure) return { connection: name, check: 'unreadable', error };
    if (isServiceError(error)) throw error;
    return unreadable(name, 'upstream_unreadable', `connection ${name} could not be read`);
  }
}

/**
 * Checks the catalogs of every connection `tools` name.
 * @throws Conflict `catalog_changed` with `connections`, or the first `UpstreamFailure`.
 */
export async function checkCatalogs(
  options: CatalogCheckOptions,
  tenant: string,
  tools: readonly ExtraTool[],
): Promise<void> {
  const names = [...new Set(tools.map((tool) => tool.connection))].sort();
  const results = await Promise.all(names.map((name) => compare(options, tenant, name)));
  const changed = results.filter((result) => result.check === 'changed');
  if (changed.length > 0) {
    const connections = changed.map((result) => result.connection);
    throw new Conflict(
      'catalog_changed',
      `the catalog of ${connections.join(', ')} changed since it was linked`,
      { extensions: { connections } },
    );
  }
  for (const result of results) if (result.check === 'unreadable') throw result.error;
}
