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
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { OAuthError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { InvalidRequest, UpstreamFailure } from '../errors.ts';

/** The snake_case codes an MCP failure carries. */
export type UpstreamCode =
  | 'upstream_unreachable'
  | 'upstream_timeout'
  | 'upstream_unreadable'
  | 'upstream_authorization_failed'
  | 'upstream_authorization_required';

/**
 * The server answered 401: it wants a credential we do not have, or refused the one we
 * sent and it could not be refreshed (§3.3 "reads as needing authorization again"). An
 * OAuth client provider that was asked to authorize holds the URL an owner opens
 * (`ConnectionOAuthProvider.authorizeUrl`); the error itself carries no credential state.
 */
export class AuthorizationRequired extends UpstreamFailure {
  constructor(endpoint: string, options: { cause?: unknown } = {}) {
    super(
      'upstream_authorization_required',
      `MCP server at ${endpoint} demands authorization`,
      options,
    );
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
}

/**
 * Maps anything the SDK threw into the service's vocabulary. A caller's abort is passed
 * through as its reason (like `fetch`), since nothing upstream failed.
 */
export function upstreamFailure(error: unknown, context: FailureContext): Error {
  const label = endpointLabel(context.endpoint);
  if (context.signal?.aborted === true) {
    return context.signal.reason instanceof Error ? context.signal.reason : new Error('aborted');
  }
  if (error instanceof UpstreamFailure || error instanceof InvalidRequest) return error;
  if (context.deadline.aborted || isTimeout(error)) {
    return new UpstreamFailure(
      'upstream_timeout',
      `MCP server at ${label} did not answer in time`,
      {
        cause: error,
      },
    );
  }
  if (error instanceof UnauthorizedError) {
    return new AuthorizationRequired(label, { cause: error });
  }
  if (error instanceof StreamableHTTPError && error.code === 401) {
    return new AuthorizationRequired(label, { cause: error });
  }
  if (error instanceof OAuthError) {
    return new UpstreamFailure(
      'upstream_authorization_failed',
      `MCP server at ${label}: its authorization server refused us (${error.errorCode}: ${error.message})`,
      { cause: error },
    );
  }
  if (isNetworkFailure(error)) {
    return new UpstreamFailure(
      'upstream_unreachable',
      `MCP server at ${label} could not be reached (${describe(error)})`,
      { cause: error },
    );
  }
  return new UpstreamFailure(
    'upstream_unreadable',
    `MCP server at ${label} could not be read (${describe(error)})`,
    { cause: error },
  );
}

function isTimeout(error: unknown): boolean {
  return (
    (error instanceof McpError && error.code === (ErrorCode.RequestTimeout as number)) ||
    (error instanceof DOMException && error.name === 'TimeoutError')
  );
}

/** `fetch` rejects with a TypeError whose cause carries the socket error (ECONNREFUSED…). */
function isNetworkFailure(error: unknown): boolean {
  if (!(error instanceof TypeError)) return false;
  return error.message === 'fetch failed' || error.cause instanceof Error;
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`.slice(0, 300);
}
