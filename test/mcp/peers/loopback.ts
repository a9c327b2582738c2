/**
 * Listening on loopback for the in-process MCP peers: port 0, 127.0.0.1 only, and a close
 * that ends open keep-alive and SSE connections, so no peer outlives its test file.
 */
import { createServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A server listening on 127.0.0.1. */
export interface Loopback {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly origin: string;
  readonly server: Server;
  /** Stops listening and drops every open connection. */
  close(): Promise<void>;
}

/**
 * Listens on an ephemeral loopback port. `handler` may be attached after listening (an
 * authorization server must know its own origin before it is built): pass `undefined`
 * and call `server.on('request', …)` once the origin is known.
 */
export async function listenOnLoopback(handler?: RequestListener): Promise<Loopback> {
  const server = handler === undefined ? createServer() : createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => {
          if (error === undefined) resolve();
          else reject(error);
        });
        server.closeAllConnections();
      }),
  };
}

/** A port nothing listens on right now: bound, read and released (for child processes). */
export async function freePort(): Promise<number> {
  const probe = await listenOnLoopback();
  const { port } = probe.server.address() as AddressInfo;
  await probe.close();
  return port;
}
