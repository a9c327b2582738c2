/**
 * Context, events and effect shapes of the connection machine (interface 3.3, decisions
 * rows 41 to 46). Kept beside `connection.machine.ts` so the edge can import the shapes
 * without the machine.
 */
import type { WriteOutcome } from '../schemas/common.ts';
import type { Catalog, ConnectionAuth } from '../schemas/connections.ts';

/** The states a connection rests in; `probing` is only ever passed through. */
export type RestingState = 'none' | 'linked' | 'authorizing';

/** What an owner links (4.3, row 44), as the edge checked it: the config of a connection. */
export interface ConnectionConfig {
  /** The server's Streamable HTTP endpoint, http or https. */
  readonly endpoint: string;
  /** A secret the tenant holds, sent as a bearer; null lets the server ask for OAuth. */
  readonly credential: string | null;
  readonly result_limit: number | null;
  readonly timeout: string | null;
  /** Where the owner's browser goes after authorization, already allowlisted. */
  readonly return_to: string;
}

/** What a probe of the server found (the effects' output). */
export type LinkResult =
  | {
      readonly status: 'linked';
      readonly auth: ConnectionAuth;
      /** The catalog discovered live, every page (row 42). */
      readonly catalog: Catalog;
    }
  | {
      readonly status: 'authorizing';
      readonly auth: ConnectionAuth;
      /** The URL the owner opens (3.3 row 2). */
      readonly authorize: string;
    };

/** Why the server is being probed. */
export type ProbePurpose =
  /** PUT /connections/{id}: link with this config (3.3 rows 1, 2 and 4). */
  | 'link'
  /** POST /connections/{id}/authorize: mint a fresh URL, stored tokens ignored (row 43). */
  | 'fresh'
  /** GET /connections/callback: exchange the code and discover (row 45). */
  | 'callback';

/** A probe under way: where it started and the config it links with. */
export interface Probe {
  readonly from: RestingState;
  readonly purpose: ProbePurpose;
  readonly config: ConnectionConfig;
}

/** What the machine remembers; the edge stores it as the connection resource. */
export interface ConnectionContext {
  readonly config: ConnectionConfig | null;
  readonly auth: ConnectionAuth | null;
  /** Captured when last linked; kept while a refused token waits for authorization. */
  readonly catalog: Catalog | null;
  /** The URL to authorize at while `authorizing`. */
  readonly authorize: string | null;
  readonly probe: Probe | null;
  /** What the last PUT did (2.16, row 46); null after any other event. */
  readonly outcome: WriteOutcome | null;
  /** Why the last probe failed; the machine returned to where it started (§7: nothing changed). */
  readonly failure: unknown;
}

/** A connection that does not exist. */
export const initialConnectionContext: ConnectionContext = {
  config: null,
  auth: null,
  catalog: null,
  authorize: null,
  probe: null,
  outcome: null,
  failure: null,
};

/** The events of table 3.3 and the routes of 4.3 and 4.4. */
export type ConnectionEvent =
  /** PUT /connections/{id} with a checked body. */
  | { readonly type: 'link.requested'; readonly config: ConnectionConfig }
  /** POST /connections/{id}/authorize (row 43). */
  | { readonly type: 'authorize.requested' }
  /** GET /connections/callback?code&state (row 45). */
  | { readonly type: 'callback.received'; readonly code: string; readonly state: string }
  /** GET /connections/callback?error&state: the owner (or the server) said no (RFC 6749 §4.1.2.1). */
  | { readonly type: 'callback.refused'; readonly error: string }
  /** 3.3 row 5: the token set was refused and could not be refreshed; a fresh URL was minted. */
  | { readonly type: 'token.refused'; readonly authorize: string }
  /** DELETE /connections/{id} (row 78), once no install references it. */
  | { readonly type: 'unlink.requested' };

/** The input of the `catalogReader` effect. */
export interface CatalogReaderInput {
  readonly purpose: 'link' | 'fresh';
  readonly config: ConnectionConfig;
}

/** The input of the `authorizer` effect. */
export interface AuthorizerInput {
  readonly config: ConnectionConfig;
  readonly code: string;
  readonly state: string;
}

/** Row 46: the parts of a config an `unchanged` PUT must repeat. */
export function sameConfig(a: ConnectionConfig | null, b: ConnectionConfig): boolean {
  return (
    a !== null &&
    a.endpoint === b.endpoint &&
    a.credential === b.credential &&
    a.result_limit === b.result_limit &&
    a.timeout === b.timeout &&
    a.return_to === b.return_to
  );
}

/** Row 46 (2.16): created, replaced, or unchanged when config and catalog digest repeat. */
export function outcomeOf(context: ConnectionContext, result: LinkResult): WriteOutcome | null {
  const probe = context.probe;
  if (probe?.purpose !== 'link') return null;
  if (probe.from === 'none') return 'created';
  const unchanged =
    result.status === 'linked' &&
    probe.from === 'linked' &&
    sameConfig(context.config, probe.config) &&
    context.auth?.kind === result.auth.kind &&
    context.catalog?.digest === result.catalog.digest;
  return unchanged ? 'unchanged' : 'replaced';
}
