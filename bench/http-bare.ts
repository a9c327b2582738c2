/**
 * The baselines of `npm run bench`, measured in the same run as ours: a bare Fastify app
 * on the same Redis as the app, the least any append over HTTP, and any delivery of it to
 * tails, can do.
 *
 * - `POST /bare/:stream`: one Lua call that mints the cursors (INCRBY) and XADDs every
 *   record of the body. A body of one record is the one-per-request baseline (INCR + XADD
 *   in one EVALSHA), a body of 100 the batch baseline (one EVALSHA per batch of 100).
 * - `GET /bare/:stream/events`: a bare tail of the stream, as HTTP chunked NDJSON, or on
 *   `Upgrade: websocket` (@fastify/websocket, as the app) one text message per line. The
 *   tails of a stream are held in memory; once the Lua call answers, the append encodes
 *   each record's line once (`{"Ok":{cursor, kind, producer, body}}`) and writes those
 *   bytes straight to every tail of its stream: no store tail, wake-up, face, pacing or
 *   backpressure. This is the broadcast the latency rows hold ours against.
 *
 * No logger, hooks, auth, validation, filter, idempotency or canonical JSON: it parses
 * the body with Fastify's default JSON parser, turns each record into XADD fields and
 * answers the first cursor.
 */
import type { AddressInfo } from 'node:net';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import { Redis, type Result } from 'ioredis';
import type { WebSocket } from 'ws';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /** `BARE_APPEND` below. */
    bareAppend(...args: string[]): Result<number, Context>;
  }
}

/**
 * KEYS[1] the cursor counter, KEYS[2] the stream; ARGV four per record: kind name, kind
 * version, producer, body. Answers the first cursor minted.
 */
const BARE_APPEND = `
local count = #ARGV / 4
local first = redis.call('INCRBY', KEYS[1], count) - count + 1
for i = 0, count - 1 do
  local a = 1 + i * 4
  redis.call('XADD', KEYS[2], string.format('%.0f-0', first + i),
    'n', ARGV[a], 'v', ARGV[a + 1], 'p', ARGV[a + 2], 'b', ARGV[a + 3])
end
return first
`;

interface OfferedRecord {
  readonly kind: { readonly name: string; readonly version: number };
  readonly body: unknown;
}

/** Removes every key under `prefix` (what a bench run left in Redis). */
export async function dropKeys(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url);
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
  await redis.quit();
}

export interface BareServer {
  readonly port: number;
  close(): Promise<void>;
}

/** A bare tail: writes a line's bytes to its reader. */
export type BareTail = (line: Buffer) => void;

/** What the bench server adds to the bare app: its stage timings (`http-stages.ts`). */
export interface BareHooks {
  /** Adds hooks to the app before it listens. */
  prepare(app: FastifyInstance): void;
  /** Wraps a tail's write of a line. */
  take(send: BareTail): BareTail;
}

const NO_HOOKS: BareHooks = { prepare: () => undefined, take: (send) => send };

/** The bare tails of each stream, and the broadcast of a line to them. */
class BareTails {
  readonly #byStream = new Map<string, Set<BareTail>>();

  add(stream: string, tail: BareTail): () => void {
    let tails = this.#byStream.get(stream);
    if (tails === undefined) {
      tails = new Set();
      this.#byStream.set(stream, tails);
    }
    tails.add(tail);
    return () => {
      tails.delete(tail);
      if (tails.size === 0) this.#byStream.delete(stream);
    };
  }

  /** Encodes each record's line once and writes it to every tail of `stream`. */
  broadcast(stream: string, first: number, records: readonly OfferedRecord[]): void {
    const tails = this.#byStream.get(stream);
    if (tails === undefined) return;
    records.forEach((record, i) => {
      const line = Buffer.from(
        `${JSON.stringify({ Ok: { cursor: first + i, kind: record.kind, producer: 'principal:bench', body: record.body } })}\n`,
      );
      for (const tail of tails) tail(line);
    });
  }
}

/** A WebSocket's message is the line without its newline, sent as text. */
const TEXT = { binary: false } as const;

/**
 * Listens on a loopback port with `POST /bare/:stream` and `GET /bare/:stream/events`,
 * keys under `prefix`, with the bench server's `hooks`.
 */
export async function startBareServer(
  url: string,
  prefix: string,
  hooks: BareHooks = NO_HOOKS,
): Promise<BareServer> {
  const redis = new Redis(url, { connectionName: 'bench:bare' });
  redis.defineCommand('bareAppend', { lua: BARE_APPEND, numberOfKeys: 2 });
  const app = Fastify({ logger: false });
  const tails = new BareTails();
  await app.register(websocket);
  app.route<{ Params: { stream: string } }>({
    method: 'GET',
    url: '/bare/:stream/events',
    handler: (request, reply) => {
      void reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, { 'content-type': 'application/jsonstream' });
      raw.flushHeaders();
      const remove = tails.add(
        request.params.stream,
        hooks.take((line) => raw.write(line)),
      );
      raw.once('close', remove);
    },
    wsHandler: (socket: WebSocket, request) => {
      const remove = tails.add(
        request.params.stream,
        hooks.take((line) => {
          socket.send(line.subarray(0, -1), TEXT);
        }),
      );
      socket.once('close', remove);
    },
  });
  app.post<{ Params: { stream: string }; Body: OfferedRecord[] }>(
    '/bare/:stream',
    async (request) => {
      const { stream } = request.params;
      const args = request.body.flatMap((record) => [
        record.kind.name,
        String(record.kind.version),
        'principal:bench',
        JSON.stringify(record.body),
      ]);
      const first = await redis.bareAppend(
        `${prefix}bare:{${stream}}:head`,
        `${prefix}bare:{${stream}}:log`,
        ...args,
      );
      tails.broadcast(stream, first, request.body);
      return { first };
    },
  );
  hooks.prepare(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    port: (app.server.address() as AddressInfo).port,
    close: async () => {
      await app.close();
      await redis.quit();
    },
  };
}
