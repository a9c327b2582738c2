/**
 * What an open WebSocket keeps of the HTTP request that opened it: nothing, once the
 * handshake is done. Left alone, the connection keeps the whole upgrade request for as
 * long as it is open, through two references: Node's socket keeps the response
 * `@fastify/websocket` assigned to it (`_httpMessage`), which keeps the request, and the
 * plugin's error listener on the WebSocket closes over Fastify's request and reply. With
 * them stay the request's bytes, its parsed headers (a bearer token among them) and its
 * Fastify objects, several KB a socket (`docs/benchmarks.md`, "Open tails").
 */
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';

/** What is released of an upgraded request. */
export interface Upgrade {
  /** The WebSocket the handshake made. */
  readonly socket: Pick<WebSocket, 'on' | 'removeAllListeners' | 'terminate'>;
  /** The response `@fastify/websocket` assigned to the connection to route the upgrade. */
  readonly response: ServerResponse;
  /** The request's logger (its request id bound), which keeps no part of the request. */
  readonly log: FastifyBaseLogger;
}

/**
 * Detaches the upgrade's response from its connection, and replaces the plugin's error
 * listener by one that does the same (log the error with the request id, end the
 * connection) holding only the request's logger. Call it from the WebSocket handler,
 * after the handshake: before it, a refusal is still answered through the response.
 */
export function releaseUpgrade({ socket, response, log }: Upgrade): void {
  const connection = response.socket;
  if (connection !== null) response.detachSocket(connection);
  // The plugin's listener is the only one a fresh WebSocket has (the ws server adds its
  // own to the TCP socket, not here); a socket must keep one, or an error would throw.
  socket.removeAllListeners('error');
  socket.on('error', (error) => {
    log.error(error);
    socket.terminate();
  });
}
