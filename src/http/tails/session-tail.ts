/**
 * `GET /sessions/{id}/events` (interface 4.2; decisions rows 3, 7, 66 to 68): the session
 * tail, as JSON lines over HTTP or, on `Upgrade: websocket`, as one text message per line
 * at the same path. Both transports serve the same lines (`lines.ts`) through the same
 * face, and both end when the session is archived, at `to`, at token expiry, when the
 * reader goes or when the service stops.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import { IdParams } from '../../schemas/common.ts';
import { TailLine, TailQuery } from '../../schemas/records.ts';
import type { SessionTokens } from '../../sessions/tokens.ts';
import type { LogStore } from '../../storage/log-store.ts';
import type { ServiceMetrics } from '../../metrics/service-metrics.ts';
import { problemResponses } from '../openapi-responses.ts';
import { TAIL_LIMITS, TailSlots, type TailLimits } from './limits.ts';
import { tailLines, type LineTaker } from './lines.ts';
import { SharedLines } from './shared-lines.ts';
import { TailEnd } from './tail-end.ts';
import { jsonStreamAnswer, JsonLineWriter } from './ndjson.ts';
import { Pacer } from './pacer.ts';
import { sessionReader, type TailReader } from './session-reader.ts';
import { StandingWatch, type Watched } from './standing-watch.ts';
import { releaseUpgrade } from './upgraded.ts';
import { LineSender, type TailSocket } from './websocket.ts';

export interface SessionTailDeps {
  readonly logStore: LogStore;
  /** Verifies session tokens; one per app, shared with the session routes. */
  readonly sessionTokens: SessionTokens;
  readonly clock: Clock;
  /** The root key tenant sealing keys derive from. */
  readonly sealKey: Buffer;
  /** Aborted when the process stops: open tails end cleanly. */
  readonly shutdown: AbortSignal;
  /** Caps and buffers of the tails; `TAIL_LIMITS` when absent. */
  readonly tailLimits?: TailLimits | undefined;
  /** Counts live tails by transport and the store failures that end one. */
  readonly metrics: ServiceMetrics;
}

const Query = TailQuery.extend({
  access_token: z
    .string()
    .optional()
    .describe('WebSocket only: the session token, for browsers that cannot set `Authorization`.'),
});

const DESCRIPTION = `Session token. Streams the records from \`from\` as JSON lines (\`application/jsonstream\`), one \`{"Ok": record}\` or \`{"Err": {code, message, cursor}}\` per line. Without \`to\` the tail stays open and follows new records; it ends after \`session.archived\`, before \`to\`, when the token expires (a last line \`Err token_expired\`), or within a few seconds of the token ceasing to stand: its install key rotated or revoked, its install deleted, or the console user who minted it removed from the tenant (a last line \`Err token_revoked\`).

A token holds at most \`TAILS_PER_CREDENTIAL\` open tails and a session \`TAILS_PER_SESSION\` (50 and 1,000 by default): one more is refused with 429 \`too_many_tails\` until a tail closes. A reader that leaves more than \`TAIL_BUFFER_BYTES\` unread for longer than \`TAIL_LAG_TIMEOUT\` is dropped: the tail ends with a last line \`Err reader_lagging\` carrying the cursor to tail again from, and the connection closes; no record is lost, the reader tails again from that cursor (or from after the last record it read).

Faces: a principal's or console user's token sees public records only; an executor's token also sees the records addressed to it. Call arguments and tool results read \`{"sealed": {"digest", "size"}}\`, except the arguments of a call addressed to the reading executor.

**WebSocket.** The same tail is served at the same path on \`Upgrade: websocket\`: one text message per line, the same objects and faces, then a close frame (1000 ended, 1001 service stopping, 1008 token expired or no longer standing, 1011 read failed, 1013 the reader lagged behind: tail again from after the last record received). The service pings a peer silent for \`WS_PING_INTERVAL\` and drops one that leaves a ping unanswered for \`WS_PONG_TIMEOUT\`. A browser may pass the token as the \`access_token\` query parameter or as \`Sec-WebSocket-Protocol: bearer, <token>\` (the socket answers the \`bearer\` subprotocol).`;

/** Registers the session tail. */
export function sessionTailRoutes(app: FastifyInstance, deps: SessionTailDeps): void {
  const limits = deps.tailLimits ?? TAIL_LIMITS;
  const buffer = { bufferBytes: limits.bufferBytes, lagMs: limits.lagMs };
  const reading = { sessionTokens: deps.sessionTokens, sealKey: deps.sealKey };
  // One per app: every tail of the app shares the public face's lines (see SharedLines),
  // one pacer and one count of open tails.
  const shared = new SharedLines();
  const pacer = new Pacer();
  const slots = new TailSlots(limits);
  const standing = new StandingWatch(deps.sessionTokens, deps.clock);
  // The open tails, each its one `TailEnd` and the watch on its token: the service
  // stopping ends them all through one listener here, not one per tail.
  const live = new Map<TailEnd, Watched>();
  const stopping = (): void => {
    for (const tail of live.keys()) tail.end('stopping');
  };
  deps.shutdown.addEventListener('abort', stopping, { once: true });
  app.addHook('onClose', () => {
    deps.shutdown.removeEventListener('abort', stopping);
    pacer.close();
    standing.close();
    return Promise.resolve();
  });
  // The reader verified, and its slot taken, before the handler runs, so that an upgrade
  // is refused as HTTP. The handler takes them over; the request is not kept with them.
  const readers = new WeakMap<FastifyRequest, Pending>();
  const takeReader = (request: FastifyRequest): Pending => {
    const held = readers.get(request);
    if (held === undefined) throw new Error('the tail reader was not verified');
    readers.delete(request);
    return held;
  };
  /** Frees the slot of a tail, which no longer waits for its connection to close. */
  const release = (held: Verified): void => {
    held.connection.off('close', held.free);
    held.free();
  };

  const readFailed = (error: unknown, log: FastifyBaseLogger): void => {
    deps.metrics.storeFailed(error);
    log.error({ err: error }, 'tail read failed');
  };

  /**
   * The lines of a verified tail, which `taker` may take as they land and `ended` ends
   * (its reason a `TailEnding`); `close(ended)` stops the watch on its token. `log` is
   * the request's logger: a tail keeps that, not its request.
   */
  const open = (
    held: Verified,
    query: TailQuery,
    log: FastifyBaseLogger,
    ended: TailEnd,
    taker: LineTaker,
  ) => {
    const { reader } = held;
    if (deps.shutdown.aborted) ended.end('stopping');
    live.set(ended, standing.add(reader.verified, ended));
    return tailLines({
      log: deps.logStore,
      stream: reader.session,
      from: query.from,
      to: query.to,
      face: reader.face,
      ended,
      requestLog: log,
      onError: readFailed,
      shared,
      taker,
    });
  };
  const close = (ended: TailEnd): void => {
    const watched = live.get(ended);
    if (watched !== undefined) standing.remove(watched);
    live.delete(ended);
  };

  /**
   * Serves a verified tail over its upgraded socket, until the tail ends. Not an async
   * function: every open tail would hold its suspended frame, and the await under way.
   */
  const serveSocket = (
    socket: TailSocket & Pick<WebSocket, 'on'>,
    held: Verified,
    query: TailQuery,
    log: FastifyBaseLogger,
  ): void => {
    const sender = new LineSender(socket, buffer, {
      wire: held.connection,
      pacer,
      encode: shared.message,
    });
    const ended = new TailEnd();
    const lines = open(held, query, log, ended, sender);
    socket.on('close', () => {
      ended.end('gone');
    });
    deps.metrics.tailOpened('websocket');
    sender.send(lines, deps.shutdown, (error) => {
      if (error !== undefined) {
        log.error({ err: error }, 'tail failed');
        socket.terminate();
      }
      close(ended);
      held.free();
      deps.metrics.tailClosed('websocket');
    });
  };

  app.withTypeProvider<ZodTypeProvider>().route({
    method: 'GET',
    url: '/sessions/:id/events',
    schema: {
      summary: 'Tail the session log (JSON lines, or WebSocket at the same path)',
      description: DESCRIPTION,
      tags: ['sessions'],
      security: [{ sessionToken: [] }],
      params: IdParams,
      querystring: Query,
      response: {
        200: jsonStreamAnswer(TailLine, 'The records, one JSON line each, as they land.'),
        ...problemResponses(400, 401, 403, 429),
      },
    },
    preHandler: async (request, reply) => {
      const reader = await sessionReader(
        request,
        request.params.id,
        request.query.access_token,
        reading,
      );
      const free = slots.take(reader.credential, reader.session);
      // The slot is free again when the tail ends, or else when its connection closes,
      // whichever way the request ends (a WebSocket upgrade that fails after this never
      // reaches a handler).
      const connection = request.raw.socket;
      // `on`, not `once`: a socket closes once, and `once` would wrap `free` for each tail.
      connection.on('close', free);
      readers.set(request, { reader, free, connection, response: reply.raw });
    },
    handler: async (request, reply) => {
      const held = takeReader(request);
      // One `TailEnd` ends the tail, whatever ends it (`TailEnding`).
      const ended = new TailEnd();
      const writer = new JsonLineWriter({
        encode: shared.jsonLine,
        pacer,
        live: true,
        buffer,
        onLag: () => {
          ended.end('lagging');
        },
      });
      const lines = open(held, request.query, request.log, ended, writer);
      reply.raw.on('close', () => {
        ended.end('gone');
      });
      deps.metrics.tailOpened('ndjson');
      try {
        // The tail's own end cuts a write stuck behind a reader that stopped reading.
        await writer.write(reply, lines, ended.signal);
      } catch (error) {
        request.log.error({ err: error }, 'tail failed');
        reply.raw.destroy();
      } finally {
        close(ended);
        release(held);
        deps.metrics.tailClosed('ndjson');
      }
    },
    // Not async: `@fastify/websocket` holds a handler's promise, and a function to catch
    // it with, for as long as the tail is open; `serveSocket` catches its own failures.
    // The tail takes what it needs of the request (its reader, query and logger) and lets
    // go of the rest, which the open connection would otherwise keep (`upgraded.ts`).
    wsHandler: (socket, request) => {
      const { response, ...held } = takeReader(request);
      releaseUpgrade({ socket, response, log: request.log });
      // The tail frees its slot when it ends, which the socket's close ends: the
      // connection need not listen for that too.
      held.connection.off('close', held.free);
      serveSocket(socket, held, request.query, request.log);
    },
  });
}

/** A tail's verified reader and slot, taken before its handler runs. */
interface Verified {
  readonly reader: TailReader;
  /** Frees the tail's slot; also listens for its connection's close until the tail ends. */
  readonly free: () => void;
  /** The request's connection. */
  readonly connection: Socket;
}

/** A verified tail whose handler has not run yet. */
interface Pending extends Verified {
  /** The request's response, which an upgraded socket detaches (`releaseUpgrade`). */
  readonly response: ServerResponse;
}
