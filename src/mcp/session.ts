/**
 * One short MCP session over Streamable HTTP: connect, do one piece of work, close.
 *
 * Discovery (§3.3) and the service's own tool calls (decisions row 89) both run through
 * here, so both present the same client identity and the same empty capabilities. That
 * matters for the catalog digest: a server may offer different tools to a client that
 * declares sampling or elicitation (server-everything does), so a fixed identity keeps
 * two discoveries of an unchanged server byte-for-byte equal.
 *
 * One deadline covers the whole session, every HTTP request included (OAuth discovery,
 * registration and token requests too), so a server that accepts a connection and never
 * answers cannot hold a PUT or a turn past its `timeout` (row 18).
 *
 * Every request of the session, to the endpoint and to whatever its answers point at, goes
 * through one exchange of the egress guard (`src/net/egress.ts`). The SDK
 * is told to leave redirects to that fetch (`redirectPolicy: 'follow'`), so the guard's
 * redirect policy is the only one.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Egress, GuardedFetch } from '../net/egress.ts';
import { endpointLabel, parseEndpoint, upstreamFailure } from './failures.ts';
import { loadMcpSdk } from './sdk.ts';

/** The identity every session of the service presents on `initialize`. */
export const CLIENT_INFO = { name: 'agent-session-service', version: '1.0.0' } as const;

/** How to reach one MCP server. Give at most one of `bearer` and `authProvider`. */
export interface McpAccess {
  /** The server's Streamable HTTP endpoint (an http or https URL). */
  readonly endpoint: string;
  /** A static credential the tenant holds (§3.3), sent as `Authorization: Bearer`. */
  readonly bearer?: string;
  /** An OAuth client for the connection: sends its tokens, refreshes or re-authorizes on 401. */
  readonly authProvider?: OAuthClientProvider;
  /** The whole session's deadline in ms, connect and close included. */
  readonly timeoutMs: number;
  /** The caller's cancellation; its reason is thrown as is. */
  readonly signal?: AbortSignal;
  /** The process's egress guard: every request of the session goes through it. */
  readonly egress: Egress;
  /** The most the session's answers may hold in all, in bytes; unbounded when absent. */
  readonly maxResponseBytes?: number;
}

/** What a piece of work gets: a connected client and the options every request must carry. */
export interface McpSession {
  readonly client: Client;
  /** Carries the session deadline; pass to every request. */
  readonly request: RequestOptions;
  /** The protocol revision negotiated on `initialize`. */
  readonly protocolVersion: string;
  /** The endpoint as messages may show it. */
  readonly label: string;
  /** Logs the detail of a refusal at warn level (never into an answer; no secrets). */
  readonly report: (detail: Readonly<Record<string, unknown>>, message: string) => void;
}

/**
 * Opens a session, runs `work` in it and closes it, mapping every failure to the
 * service's errors (`failures.ts`). Errors `work` throws as service errors pass unchanged.
 */
export async function withMcpSession<T>(
  access: McpAccess,
  work: (session: McpSession) => Promise<T>,
): Promise<T> {
  if (access.bearer !== undefined && access.authProvider !== undefined) {
    throw new TypeError('give a bearer credential or an OAuth client provider, not both');
  }
  const endpoint = parseEndpoint(access.endpoint);
  const label = endpointLabel(endpoint);
  // Loaded before the deadline starts: the first exchange of a process loads the SDK.
  const { Client, StreamableHTTPClientTransport } = await loadMcpSdk();
  const outbound = access.egress.open(
    access.maxResponseBytes === undefined ? {} : { maxResponseBytes: access.maxResponseBytes },
  );
  const deadline = AbortSignal.timeout(access.timeoutMs);
  const signal = AbortSignal.any(
    access.signal === undefined
      ? [deadline, outbound.signal]
      : [deadline, outbound.signal, access.signal],
  );
  const transport = new StreamableHTTPClientTransport(endpoint, {
    fetch: boundedFetch(outbound.fetch, signal),
    redirectPolicy: 'follow',
    ...(access.authProvider === undefined ? {} : { authProvider: access.authProvider }),
    ...(access.bearer === undefined
      ? {}
      : { requestInit: { headers: { Authorization: `Bearer ${access.bearer}` } } }),
  });
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  const request: RequestOptions = { signal, timeout: access.timeoutMs };
  try {
    await client.connect(transport, request);
    return await work({
      client,
      request,
      protocolVersion: transport.protocolVersion ?? 'unknown',
      label,
      report: (detail, message) => {
        access.egress.report({ upstream: { endpoint: label, ...detail } }, message);
      },
    });
  } catch (error) {
    throw upstreamFailure(error, {
      endpoint,
      deadline,
      signal: access.signal,
      outbound,
      egress: access.egress,
      secrets: access.bearer === undefined ? [] : [access.bearer],
    });
  } finally {
    // A stateful server keeps a session until told otherwise; ending it is a courtesy, so
    // its failure (a server that refuses DELETE with 405, a spent deadline) is ignored.
    if (transport.sessionId !== undefined && !signal.aborted) {
      await transport.terminateSession().catch(() => undefined);
    }
    await client.close().catch(() => undefined);
    await outbound.close();
  }
}

/** The guarded fetch, also stopping when the session's signal does, whatever signal the SDK passes. */
function boundedFetch(guarded: GuardedFetch, signal: AbortSignal): FetchLike {
  return (url, init) =>
    guarded(url, {
      ...init,
      signal: init?.signal == null ? signal : AbortSignal.any([init.signal, signal]),
    });
}
