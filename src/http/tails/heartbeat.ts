/**
 * WebSocket liveness: a peer that has been silent for `pingIntervalMs`
 * is pinged, and one that leaves a ping unanswered for `pongTimeoutMs` is taken for gone
 * and its connection ended (no close frame: a dead peer would not read it). A tail that
 * waits for records writes nothing (decisions row 3: no heartbeats in the lines), so
 * without this a peer that vanished without a FIN would hold its socket, its tail and its
 * slot (`TailSlots`) until its token expired.
 *
 * One timer serves every socket of the app's WebSocket server (RFC 6455 §5.5.2: a pong
 * answers a ping; browsers and `ws` answer on their own), ticking at half the shorter of
 * the two settings, so a dead peer is ended between `pongTimeoutMs` and 1.5 times it
 * after its ping, and a live one is pinged within 1.5 times `pingIntervalMs` of its last
 * pong.
 */
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { WebSocket } from 'ws';
import type { TailLimits } from './limits.ts';

/** What the heartbeat needs of a socket. */
type Peer = Pick<WebSocket, 'on' | 'ping' | 'terminate' | 'readyState'>;

/** A socket's last pong, and the ping it owes an answer to. */
interface Beat {
  answered: number;
  pinged: number | undefined;
}

/** Pings every WebSocket of `app` and ends those that stop answering. */
export function installHeartbeat(
  app: FastifyInstance,
  limits: Pick<TailLimits, 'pingIntervalMs' | 'pongTimeoutMs'>,
  now: () => number = () => performance.now(),
): void {
  const beats = new WeakMap<Peer, Beat>();
  // One listener for every socket (an emitter calls it with the socket as `this`): a
  // closure per socket would be held by every open connection.
  function answered(this: Peer): void {
    const beat = beats.get(this);
    if (beat === undefined) return;
    beat.answered = now();
    beat.pinged = undefined;
  }
  const beatOf = (socket: Peer, at: number): Beat => {
    let beat = beats.get(socket);
    if (beat === undefined) {
      beat = { answered: at, pinged: undefined };
      beats.set(socket, beat);
      socket.on('pong', answered);
    }
    return beat;
  };
  const tick = (): void => {
    const at = now();
    for (const socket of app.websocketServer.clients) {
      if (socket.readyState !== WebSocket.OPEN) continue;
      const beat = beatOf(socket, at);
      if (beat.pinged !== undefined) {
        if (at - beat.pinged >= limits.pongTimeoutMs) socket.terminate();
      } else if (at - beat.answered >= limits.pingIntervalMs) {
        beat.pinged = at;
        socket.ping();
      }
    }
  };
  let timer: NodeJS.Timeout | undefined;
  app.addHook('onReady', () => {
    timer = setInterval(tick, Math.min(limits.pingIntervalMs, limits.pongTimeoutMs) / 2);
    timer.unref();
    return Promise.resolve();
  });
  app.addHook('onClose', () => {
    clearInterval(timer);
    return Promise.resolve();
  });
}
