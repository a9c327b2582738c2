/**
 * Linking a connection (interface §3.3) for an owner who gives no credential: the MCP
 * authorization flow (OAuth 2.1 with PKCE, RFC 9728 / 8414 discovery, RFC 7591
 * registration), as the notes' §1 mapping and decisions rows 43 and 45 lay it out.
 *
 * - `beginLink` (PUT /connections/{id} without a credential): tries the server with the
 *   connection's stored tokens first ("the server's earlier authorization still opens →
 *   linked"), refreshing them transparently on a 401; a server that demands no
 *   authorization links at once; otherwise the SDK registers a client if needed and the
 *   answer is `authorizing` with the URL the owner opens.
 * - `finishLink` (GET /connections/callback?code&state): takes the single-use handle,
 *   exchanges the code with its PKCE verifier, stores the tokens and discovers the catalog.
 * - `freshAuthorizeUrl` (POST /connections/{id}/authorize, row 43): a new authorization
 *   URL, ignoring stored tokens.
 *
 * A token set the server refuses and that cannot be refreshed reads as `authorizing`
 * again with a fresh URL; the refused tokens are forgotten (the SDK invalidates them).
 */
import type { Clock, Entropy } from '../clock.ts';
import { InvalidRequest, UpstreamFailure } from '../errors.ts';
import type { Egress } from '../net/egress.ts';
import type { DiscoveredCatalog } from './catalog.ts';
import { discoverCatalog } from './discover.ts';
import {
  AuthorizationRequired,
  endpointLabel,
  parseEndpoint,
  upstreamFailure,
} from './failures.ts';
import { ConnectionOAuthProvider } from './oauth-provider.ts';
import type { ProviderMode } from './oauth-provider.ts';
import type { ConnectionRef, OAuthStateStore } from './oauth-state.ts';
import { loadMcpSdk } from './sdk.ts';

/** How long an authorization URL stays good: ten minutes, like a consent request (row 29). */
export const AUTHORIZATION_TTL_MS = 600_000;

/** What every OAuth flow of a connection needs from the service. */
export interface OAuthContext {
  readonly store: OAuthStateStore;
  /** The service's `BASE_URL` (row 1); the callback is `${baseUrl}/connections/callback`. */
  readonly baseUrl: string;
  readonly clock: Clock;
  /** Mints the `state` handles. */
  readonly entropy: Entropy;
  /** Overrides `AUTHORIZATION_TTL_MS`. */
  readonly authorizationTtlMs?: number;
}

/** An OAuth context plus the bounds of one exchange with the server. */
export interface LinkContext extends OAuthContext {
  /** The deadline of each exchange with the server, in ms (the connection's `timeout`). */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** The egress guard every request of the flow goes through. */
  readonly egress: Egress;
}

/** A connection to link: which one, where its server is, where the browser returns. */
export interface LinkRequest extends ConnectionRef {
  readonly endpoint: string;
  /** Already checked against the allowlisted origins (row 44). */
  readonly returnTo: string;
}

/** The two states a link can read as (§2.12 `state`). */
export type LinkOutcome =
  | { readonly status: 'linked'; readonly catalog: DiscoveredCatalog }
  | { readonly status: 'authorizing'; readonly authorize: URL };

/** A finished callback: the connection it was for, where to send the browser, and the outcome. */
export type FinishedLink = ConnectionRef & { readonly returnTo: string } & LinkOutcome;

/**
 * Links with the stored authorization, or starts a new one.
 *
 * @throws UpstreamFailure when the server cannot be reached or read, or registration or
 *   token requests fail (`upstream_authorization_failed`); nothing is linked then.
 */
export async function beginLink(context: LinkContext, link: LinkRequest): Promise<LinkOutcome> {
  return attempt(context, link, { kind: 'begin' });
}

/**
 * Mints a new authorization URL for a connection that reads as needing authorization.
 * Stored tokens are ignored (not deleted: they are replaced once the new code is
 * exchanged). A server that no longer demands authorization answers `linked`.
 */
export async function freshAuthorizeUrl(
  context: LinkContext,
  link: LinkRequest,
): Promise<LinkOutcome> {
  return attempt(context, link, { kind: 'fresh' });
}

/**
 * Finishes the authorization the callback's `state` names with its `code`.
 *
 * @throws InvalidRequest `invalid_state` when the handle is unknown, used or expired.
 * @throws UpstreamFailure when the code exchange or the discovery fails.
 */
export async function finishLink(
  context: LinkContext,
  callback: { readonly state: string; readonly code: string },
): Promise<FinishedLink> {
  const pending = await context.store.takePending(callback.state);
  if (pending === undefined || pending.expires <= context.clock.now()) {
    throw new InvalidRequest(
      'invalid_state',
      'the authorization this callback finishes is unknown, used or expired',
      { field: 'query.state', reason: 'unknown, used or expired' },
    );
  }
  const link: LinkRequest = {
    tenant: pending.tenant,
    connection: pending.connection,
    endpoint: pending.endpoint,
    returnTo: pending.returnTo,
  };
  const provider = providerFor(context, link, { kind: 'finish', pending });
  const endpoint = parseEndpoint(pending.endpoint);
  const { auth } = await loadMcpSdk();
  const deadline = AbortSignal.timeout(context.timeoutMs);
  const outbound = context.egress.open();
  const signal = AbortSignal.any(
    context.signal === undefined
      ? [deadline, outbound.signal]
      : [deadline, outbound.signal, context.signal],
  );
  // The exchange runs on its own, before discovery, so that its failure reads as an
  // authorization failure (the transport's finishAuth is the same auth() call).
  try {
    const result = await auth(provider, {
      serverUrl: endpoint,
      authorizationCode: callback.code,
      fetchFn: (url, init) => outbound.fetch(url, { ...init, signal }),
    });
    if (result !== 'AUTHORIZED') throw new Error(`the SDK answered ${result} to a code exchange`);
  } catch (error) {
    const failure = upstreamFailure(error, {
      endpoint,
      deadline,
      signal: context.signal,
      outbound,
      egress: context.egress,
      secrets: [callback.code],
    });
    throw authorizationFailed(endpointLabel(endpoint), failure);
  } finally {
    await outbound.close();
  }
  const outcome = await attempt(context, link, { kind: 'begin' });
  return {
    tenant: pending.tenant,
    connection: pending.connection,
    returnTo: pending.returnTo,
    ...outcome,
  };
}

/**
 * The OAuth client provider of a linked connection's own traffic: session start's
 * re-list (`discoverCatalog`) and the service's tool calls (`callTool`). It sends the
 * stored tokens and refreshes them on a 401; when they cannot be refreshed the call fails
 * with `AuthorizationRequired`, and `authorizeUrl` then holds a fresh authorization URL
 * whose pending authorization is already stored (the connection reads as `authorizing`).
 */
export function connectionProvider(
  context: OAuthContext,
  link: LinkRequest,
): ConnectionOAuthProvider {
  return providerFor(context, link, { kind: 'begin' });
}

async function attempt(
  context: LinkContext,
  link: LinkRequest,
  mode: ProviderMode,
): Promise<LinkOutcome> {
  const provider = providerFor(context, link, mode);
  const label = endpointLabel(parseEndpoint(link.endpoint));
  try {
    const catalog = await discoverCatalog({
      endpoint: link.endpoint,
      authProvider: provider,
      timeoutMs: context.timeoutMs,
      clock: context.clock,
      egress: context.egress,
      ...(context.signal === undefined ? {} : { signal: context.signal }),
    });
    return { status: 'linked', catalog };
  } catch (error) {
    const authorize = provider.authorizeUrl;
    if (error instanceof AuthorizationRequired && authorize !== undefined) {
      return { status: 'authorizing', authorize };
    }
    if (error instanceof AuthorizationRequired) {
      // 401 again right after the SDK authorized: the server refuses what it just issued.
      throw authorizationFailed(label, error);
    }
    if (
      error instanceof UpstreamFailure &&
      error.code === 'upstream_unreadable' &&
      provider.inFlow
    ) {
      // Metadata discovery or registration broke mid-flow: §7 "could not be registered with".
      throw authorizationFailed(label, error);
    }
    throw error;
  }
}

function providerFor(
  context: OAuthContext,
  link: LinkRequest,
  mode: ProviderMode,
): ConnectionOAuthProvider {
  return new ConnectionOAuthProvider({
    store: context.store,
    ref: { tenant: link.tenant, connection: link.connection },
    endpoint: link.endpoint,
    baseUrl: context.baseUrl.replace(/\/+$/, ''),
    returnTo: link.returnTo,
    clock: context.clock,
    entropy: context.entropy,
    authorizationTtlMs: context.authorizationTtlMs ?? AUTHORIZATION_TTL_MS,
    mode,
  });
}

const KEPT_CODES: ReadonlySet<string> = new Set([
  'upstream_unreachable',
  'upstream_timeout',
  'upstream_authorization_failed',
  'upstream_too_large',
  'upstream_refused',
]);

/**
 * Reads a failure of the OAuth flow as §7's "could not be registered with". Unreachable
 * and timed-out servers, and refusals of the egress guard, keep their own codes, and a
 * caller's abort passes through. The message is the failure's own (never the server's
 * words: `failures.ts`).
 */
function authorizationFailed(label: string, error: Error): Error {
  // Not an upstream failure: a caller's abort or a refused request; those pass through.
  if (!(error instanceof UpstreamFailure)) return error;
  if (KEPT_CODES.has(error.code)) return error;
  const prefix = `MCP server at ${label} `;
  const what = error.message.startsWith(prefix)
    ? error.message.slice(prefix.length)
    : error.message;
  return new UpstreamFailure(
    'upstream_authorization_failed',
    `MCP server at ${label}: could not register with or be authorized by its authorization server (${what})`,
  );
}
