/**
 * How a failed conversation with an MCP server reads to the service.
 *
 * Interface §7 (PUT /connections/{id}, POST /sessions) and decisions row 47 give one
 * category for every such failure: upstream failure (502), "the server could not be
 * reached, registered with, or read; nothing changed". The codes below say which of those
 * it was, and every message names the endpoint so an owner can act on it.
 *
 * A server that demands authorization is not broken, so it gets its own subclass,
 * `AuthorizationRequired`: callers that only need "could not read" (session start, where
 * a connection still authorizing is a 502, row 47) treat it as any upstream failure, and the
 * connection flow (§3.3) turns it into `authorizing`.
 */
import { InvalidRequest, UpstreamFailure } from '../errors.ts';
import type { Egress, LastRequest, Outbound } from '../net/egress.ts';
import { EgressRefused, ResponseTooLarge, egressFailure } from '../net/refusal.ts';
import { logFailure } from './failure-log.ts';
import { loadedMcpSdk, type McpSdk } from './sdk.ts';

/**
 * The server answered 401: it wants a credential we do not have, or refused the one we
 * sent and it could not be refreshed (§3.3 "reads as needing authorization again"). An
 * OAuth client provider that was asked to authorize holds the URL an owner opens
 * (`ConnectionOAuthProvider.authorizeUrl`); the error itself carries no credential state.
 */
export class AuthorizationRequired extends UpstreamFailure {
  constructor(endpoint: string) {
    super('upstream_authorization_required', `MCP server at ${endpoint} demands authorization`);
  }
}

/**
 * The egress guard refused a request of the exchange: the endpoint, or
 * a URL its answers led to, is on an address the service does not connect to, or it
 * redirects off its host. Where the endpoint is being linked, this is the owner's to fix
 * (`PUT /connections` answers 400 naming `body.endpoint`); anywhere else it is the
 * server's failure like any other (502, or `ok: false` on a call).
 */
export class EndpointRefused extends UpstreamFailure {
  /** Why, in a few words that fit after "body.endpoint" (`is a loopback address`). */
  readonly refusal: string;

  constructor(message: string, refusal: string) {
    super('upstream_refused', message);
    this.refusal = refusal;
  }
}

/**
 * The endpoint as messages show it: origin and path only, since user info or a query
 * string could carry a credential.
 */
export function endpointLabel(endpoint: URL): string {
  return `${endpoint.origin}${endpoint.pathname}`;
}

/** Parses an endpoint; a value that is not an http(s) URL is the caller's error. */
export function parseEndpoint(endpoint: string): URL {
  const url = URL.canParse(endpoint) ? new URL(endpoint) : undefined;
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new InvalidRequest('invalid_endpoint', 'an MCP endpoint must be an http or https URL');
  }
  return url;
}

/** Why a failure happened, as far as the deadline and the caller's signal tell. */
export interface FailureContext {
  readonly endpoint: URL;
  /** The deadline of this exchange: aborted means we ran out of time. */
  readonly deadline: AbortSignal;
  /** The caller's own signal: aborted means the caller gave up, which is not the server's fault. */
  readonly signal: AbortSignal | undefined;
  /** The exchange's way out: what the guard refused, and the last request. */
  readonly outbound: Outbound;
  /** Where the detail goes (warn level). */
  readonly egress: Egress;
  /** Values that must not reach the log even if a server echoes them (a bearer credential). */
  readonly secrets: readonly string[];
}

/**
 * Maps anything the SDK threw into the service's vocabulary. A caller's abort is passed
 * through as its reason (like `fetch`), since nothing upstream failed.
 *
 * The answer says what failed (which request, which HTTP status) and never carries what
 * the server sent: its body, its error text, even the URLs it pointed at are the server's
 * words. The log's warn line says the same facts; the server's words go to the debug
 * level only (`failure-log.ts`).
 */
export function upstreamFailure(error: unknown, context: FailureContext): Error {
  if (context.signal?.aborted === true) {
    return context.signal.reason instanceof Error ? context.signal.reason : new Error('aborted');
  }
  if (error instanceof UpstreamFailure || error instanceof InvalidRequest) return error;
  const failure = mapped(error, context);
  reportFailure(error, failure, context);
  return failure;
}

function mapped(error: unknown, context: FailureContext): UpstreamFailure {
  const label = endpointLabel(context.endpoint);
  const guard = context.outbound.failure() ?? egressFailure(error);
  if (guard instanceof EgressRefused) return refused(context.endpoint, guard);
  if (guard instanceof ResponseTooLarge) {
    return new UpstreamFailure(
      'upstream_too_large',
      `MCP server at ${label} sent more than ${guard.limit} bytes`,
    );
  }
  const last = context.outbound.lastRequest();
  const step = stepOf(context.endpoint, last);
  // The SDK's errors can come only from an SDK that is loaded.
  const sdk = loadedMcpSdk();
  if (context.deadline.aborted || isTimeout(error, sdk)) {
    return new UpstreamFailure(
      'upstream_timeout',
      `MCP server at ${label} did not answer in time (waiting on the ${step})`,
    );
  }
  if (sdk !== undefined && isUnauthorized(error, sdk)) return new AuthorizationRequired(label);
  if (sdk !== undefined && error instanceof sdk.OAuthError) {
    const code = OAUTH_ERROR_CODES.has(error.errorCode) ? ` (${error.errorCode})` : '';
    return new UpstreamFailure(
      'upstream_authorization_failed',
      `MCP server at ${label}: its authorization server refused the ${step}${code}`,
    );
  }
  if (isNetworkFailure(error)) {
    return new UpstreamFailure(
      'upstream_unreachable',
      `MCP server at ${label} could not be reached (the ${step}: ${errno(error)})`,
    );
  }
  if (sdk !== undefined && error instanceof sdk.StreamableHTTPError && (error.code ?? 0) > 0) {
    return new UpstreamFailure(
      'upstream_unreadable',
      `MCP server at ${label} could not be read (the ${step} answered HTTP ${String(error.code)})`,
    );
  }
  const status = last?.status;
  const answered =
    status !== undefined && (status < 200 || status > 299)
      ? `answered HTTP ${status}`
      : 'gave an answer that is not valid MCP';
  return new UpstreamFailure(
    'upstream_unreadable',
    `MCP server at ${label} could not be read (the ${step} ${answered})`,
  );
}

/** A refusal of the egress guard, said in words an owner can act on, naming only our own. */
function refused(endpoint: URL, refusal: EgressRefused): EndpointRefused {
  const label = endpointLabel(endpoint);
  const own = refusal.host === endpoint.hostname.replace(/^\[(.*)\]$/, '$1');
  switch (refusal.reason) {
    case 'scheme':
      return new EndpointRefused(
        `MCP server at ${label} led to a URL that is not http or https`,
        'leads to a URL that is not http or https',
      );
    case 'redirect':
      return new EndpointRefused(
        `MCP server at ${label}: ${refusal.message} (redirects stay on the endpoint's host)`,
        'redirects where the service does not follow',
      );
    case 'address': {
      const adjective = refusal.addressClass ?? 'refused';
      const kind = `${/^[aeiou]/.test(adjective) ? 'an' : 'a'} ${adjective} address`;
      const where = own ? `its host ${refusal.host}` : 'a URL it pointed to';
      return new EndpointRefused(
        `MCP server at ${label}: ${where} is ${kind}, which the service does not connect to unless EGRESS_ALLOW names it`,
        `is ${kind}`,
      );
    }
  }
}

/** Registered OAuth error codes (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 6750 §3.1): safe to repeat. */
const OAUTH_ERROR_CODES: ReadonlySet<string> = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'access_denied',
  'server_error',
  'temporarily_unavailable',
  'invalid_redirect_uri',
  'invalid_client_metadata',
  'invalid_token',
  'insufficient_scope',
]);

/** Which request of the exchange the last one was, in our words. */
function stepOf(endpoint: URL, last: LastRequest | undefined): string {
  if (last === undefined) return 'MCP request';
  const path = last.url.pathname;
  if (path.startsWith('/.well-known/oauth-protected-resource')) {
    return 'protected resource metadata request';
  }
  if (
    path.startsWith('/.well-known/oauth-authorization-server') ||
    path.startsWith('/.well-known/openid-configuration')
  ) {
    return 'authorization server metadata request';
  }
  if (last.url.origin === endpoint.origin && path === endpoint.pathname) {
    return `MCP ${last.method} request`;
  }
  if (last.method === 'POST') {
    return last.contentType?.startsWith('application/x-www-form-urlencoded') === true
      ? 'token request'
      : 'client registration request';
  }
  return 'authorization server request';
}

/** The detail of a failure, to the log (`failure-log.ts`): our own words at warn. */
function reportFailure(error: unknown, failure: UpstreamFailure, context: FailureContext): void {
  const last = context.outbound.lastRequest();
  logFailure(
    context.egress,
    {
      endpoint: endpointLabel(context.endpoint),
      code: failure.code,
      step: stepOf(context.endpoint, last),
      ...(last === undefined ? {} : { request: `${last.method} ${endpointLabel(last.url)}` }),
      ...(last?.status === undefined ? {} : { status: last.status }),
      ...(isNetworkFailure(error) ? { errno: errno(error) } : {}),
    },
    error,
    context.secrets,
  );
}

/** The SDK's refusal for want of authorization, or a 401 its transport met. */
function isUnauthorized(error: unknown, sdk: McpSdk): boolean {
  return (
    error instanceof sdk.UnauthorizedError ||
    (error instanceof sdk.StreamableHTTPError && error.code === 401)
  );
}

function isTimeout(error: unknown, sdk: McpSdk | undefined): boolean {
  return (
    (sdk !== undefined &&
      error instanceof sdk.McpError &&
      error.code === (sdk.ErrorCode.RequestTimeout as number)) ||
    (error instanceof DOMException && error.name === 'TimeoutError')
  );
}

/** `fetch` rejects with a TypeError whose cause carries the socket error (ECONNREFUSED…). */
function isNetworkFailure(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  return error.message === 'fetch failed' || error.cause instanceof Error;
}

/** The socket error's code (`ECONNREFUSED`, `ENOTFOUND`…): our runtime's words, not the server's. */
function errno(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code)) return code;
    current = current.cause;
  }
  return 'connection failed';
}
