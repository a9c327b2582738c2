/**
 * How long a client may take: without these a client that sends its
 * headers a byte at a time (slowloris), or opens connections and sends nothing, holds a
 * socket for as long as it likes, and enough of them hold every socket the process has.
 *
 * - `headersMs`: from a request's first byte (or the connection's start) to the end of its
 *   headers; past it Node answers 408 and closes the connection (`server.headersTimeout`).
 * - `requestMs`: from a request's first byte to the end of its body (`requestTimeout`).
 *   It ends with the request: an answer that streams for hours (a tail) is not cut by it,
 *   since the request (a GET) was complete when its headers were.
 * - `connectionMs`: how long a connection may sit with no byte either way while a request
 *   is under way (`connectionTimeout`, the socket's inactivity timeout). A tail that
 *   waits for records sends nothing for long spells (decisions row 3: no heartbeats), so
 *   a tail lifts it once its headers are out (`streamLongLived`).
 * - `keepAliveMs`: how long an idle kept-alive connection waits for its next request
 *   (Node closes it a second later, `keepAliveTimeoutBuffer`, so that a client never
 *   sends on a connection as it closes).
 *   Longer than the 60 s idle timeout of the usual load balancers, so that the balancer,
 *   not the service, closes an idle connection (else it may send a request on a
 *   connection the service is closing, and answer 502).
 *
 * Node checks the first two every `connectionsCheckingInterval` (30 s by default); that is
 * set to a quarter of the shorter, so a slow client is cut within 1.25 times its limit.
 */
import type { ServerOptions } from 'node:http';
import { Socket } from 'node:net';

/** The HTTP server's timeouts, in ms. */
export interface HttpTimeouts {
  /** `HTTP_HEADERS_TIMEOUT`: to receive a request's headers. */
  readonly headersMs: number;
  /** `HTTP_REQUEST_TIMEOUT`: to receive a whole request, body included. */
  readonly requestMs: number;
  /** `HTTP_CONNECTION_TIMEOUT`: a connection idle this long mid-request is closed. */
  readonly connectionMs: number;
  /** `HTTP_KEEP_ALIVE_TIMEOUT`: an idle kept-alive connection is closed after this. */
  readonly keepAliveMs: number;
}

/** The defaults of the settings (README "Slow and greedy clients"). */
export const HTTP_TIMEOUTS: HttpTimeouts = {
  headersMs: 10_000,
  requestMs: 30_000,
  connectionMs: 60_000,
  keepAliveMs: 72_000,
};

/** The Fastify server options that apply `timeouts`. */
export function serverTimeouts(timeouts: HttpTimeouts): {
  readonly connectionTimeout: number;
  readonly requestTimeout: number;
  readonly keepAliveTimeout: number;
  readonly http: ServerOptions;
} {
  return {
    connectionTimeout: timeouts.connectionMs,
    requestTimeout: timeouts.requestMs,
    keepAliveTimeout: timeouts.keepAliveMs,
    http: {
      headersTimeout: timeouts.headersMs,
      // Fastify sets requestTimeout on the server it creates; Node checks at creation that
      // headers do not outlast the request, so it is given here too.
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: Math.max(
        1,
        Math.floor(Math.min(timeouts.headersMs, timeouts.requestMs) / 4),
      ),
    },
  };
}

/**
 * Lifts the inactivity timeout off the connection of an answer that stays open for
 * long (a tail, once its headers are out), and has TCP probe the peer instead, so a peer
 * that vanished without a FIN is found by the kernel rather than held for ever.
 */
export function streamLongLived(socket: Socket | null | undefined): void {
  // A request injected without a network (`app.inject`) has no TCP socket to keep alive.
  if (!(socket instanceof Socket)) return;
  socket.setTimeout(0);
  socket.setKeepAlive(true, KEEP_ALIVE_PROBE_MS);
}

/** Idle time before the kernel starts probing a long-lived answer's peer. */
const KEEP_ALIVE_PROBE_MS = 60_000;
