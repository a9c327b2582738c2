/**
 * Connections left when the app closes. Closing waits for every connection, and Node
 * closes idle ones only as the close starts (`forceCloseConnections: 'idle'`): a
 * connection that was opened and never sent a byte (a client pool's spare, a port
 * scanner) is not idle to Node, and a kept-alive one whose request was in flight then
 * (or whose tail the shutdown ended) goes idle only later. Either would hold a shutdown
 * until its inactivity or keep-alive timeout, a minute or more. So as the app starts
 * closing, connections that never sent a request are closed, and connections that go
 * idle after that are closed within `IDLE_SWEEP_MS`; requests in flight still finish.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** How often a closing app closes the connections that have gone idle. */
const IDLE_SWEEP_MS = 100;

/** Lets `app` close without waiting on connections that have nothing left to answer. */
export function installSilentConnectionClose(app: FastifyInstance): void {
  const silent = new Set<Socket>();
  // One listener for every socket (an emitter calls it with the socket as `this`), taken
  // off once the socket speaks: a connection that carries a WebSocket for hours would
  // otherwise hold a closure of its own, and `once`'s wrapper, until it closes.
  function closed(this: Socket): void {
    silent.delete(this);
  }
  const spoke = (socket: Socket): void => {
    if (silent.delete(socket)) socket.off('close', closed);
  };
  app.server.on('connection', (socket: Socket) => {
    silent.add(socket);
    socket.on('close', closed);
  });
  app.server.on('request', (request: { socket: Socket }) => {
    spoke(request.socket);
  });
  app.server.on('upgrade', (request: { socket: Socket }) => {
    spoke(request.socket);
  });
  let sweep: NodeJS.Timeout | undefined;
  app.addHook('preClose', (done) => {
    for (const socket of silent) socket.destroy();
    silent.clear();
    sweep = setInterval(() => {
      app.server.closeIdleConnections();
    }, IDLE_SWEEP_MS);
    sweep.unref();
    done();
  });
  app.addHook('onClose', (_app, done) => {
    clearInterval(sweep);
    done();
  });
}
