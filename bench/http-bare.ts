/**
 * The baseline of `npm run bench` (issue 6, done-when list): a bare Fastify route on the
 * same Redis as the app, doing for each request one Lua call that mints the cursors
 * (INCRBY) and XADDs every record of the body, the least any append over HTTP can do.
 * A body of one record is the one-per-request baseline (INCR + XADD in one EVALSHA), a
 * body of 100 the batch baseline (one EVALSHA per batch of 100).
 *
 * No logger, hooks, auth, validation, filter, idempotency or canonical JSON: it parses
 * the body with Fastify's default JSON parser, turns each record into XADD fields and
 * answers the first cursor.
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { Redis, type Result } from 'ioredis';

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

/** Listens on a loopback port with `POST /bare/:stream`, keys under `prefix`. */
export async function startBareServer(url: string, prefix: string): Promise<BareServer> {
  const redis = new Redis(url, { connectionName: 'bench:bare' });
  redis.defineCommand('bareAppend', { lua: BARE_APPEND, numberOfKeys: 2 });
  const app = Fastify({ logger: false });
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
      return { first };
    },
  );
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    port: (app.server.address() as AddressInfo).port,
    close: async () => {
      await app.close();
      await redis.quit();
    },
  };
}
