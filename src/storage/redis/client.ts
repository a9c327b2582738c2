/**
 * The connections of a Redis log store, made from what `REDIS_URL` names (`target.ts`):
 * the command client every append, read and head goes through, and the subscriber
 * connections its fan-out holds beside it, one per master (`wake-reader.ts`).
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { coalesceWrites } from './coalesced-writes.ts';
import { watchSilence } from './silence-watch.ts';
import type { RedisTarget } from './target.ts';
import type { ReaderTopology } from './feed.ts';

type ClusterTarget = Extract<RedisTarget, { kind: 'cluster' }>;

/** The command client, and what its kind of server needs beside it. */
export type LogConnection =
  | { readonly kind: 'standalone'; readonly client: Redis }
  | { readonly kind: 'cluster'; readonly client: Cluster; readonly target: ClusterTarget };

/**
 * Redirections a cluster command may follow before it fails. TRYAGAIN counts as one and
 * comes back every 100 ms while a slot migrates and a script names a key the slot does
 * not hold yet (a new session, or one without idempotency keys): 64 lets an append wait
 * out a migration of about six seconds instead of failing after 1.6 (ioredis's 16).
 */
const MAX_REDIRECTIONS = 64;

/**
 * How a standalone command connection behaves when Redis goes away:
 * a command fails at once instead of waiting in a queue, so the request that issued it
 * answers 503 with `Retry-After` (`failures.ts`) and the client tries again.
 * - No offline queue: a command issued while the connection is down or reconnecting fails
 *   at once. A queued append would otherwise run whenever Redis came back, long after
 *   its request had given up.
 * - `maxRetriesPerRequest: 0` and no resending: the commands in flight when the
 *   connection drops fail with it; they are never sent again on the next connection (an
 *   append the server did run is found by its idempotency key when the client retries).
 * - Commands left without any answer on the connection for `COMMAND_TIMEOUT_MS` fail,
 *   all of them, and the client reconnects (a link that went silent; `silence-watch.ts`,
 *   one timer per connection rather than ioredis's `commandTimeout`, one per command),
 *   and a connection attempt gives up after `CONNECT_TIMEOUT_MS`.
 * - It reconnects by itself, every second at the slowest, so service resumes within about
 *   a second of Redis coming back.
 */
export const COMMAND_TIMEOUT_MS = 5_000;
const CONNECT_TIMEOUT_MS = 5_000;
const RECONNECT_MAX_MS = 1_000;

const FAIL_FAST: RedisOptions = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  connectTimeout: CONNECT_TIMEOUT_MS,
  retryStrategy: (times) => Math.min(times * 50, RECONNECT_MAX_MS),
};

/**
 * The command client of `target`, not yet connected (`connect()` it). Commands issued in
 * the same round of the event loop go out in one write: with many sessions at work, the
 * appends, reads and head checks of one round cost one system call instead of one each,
 * and on this kind of machine the write call was the largest single cost of a turn's
 * Redis traffic (`npm run bench:turns` under `--cpu-prof`). A standalone client does
 * this by corking its socket (`coalesced-writes.ts`), which unlike ioredis's
 * auto-pipelining never holds a command behind the answers of an earlier batch; a
 * cluster's clients auto-pipeline per node. Order per connection is kept.
 */
export function commandClient(target: RedisTarget, name: string): LogConnection {
  const connectionName = `${name}:command`;
  if (target.kind === 'standalone') {
    const client = new Redis(target.url, { ...FAIL_FAST, lazyConnect: true, connectionName });
    standaloneCommands(client, COMMAND_TIMEOUT_MS);
    return { kind: 'standalone', client };
  }
  const client = new Cluster(
    target.seeds.map(({ host, port }) => ({ host, port })),
    {
      lazyConnect: true,
      enableAutoPipelining: true,
      maxRedirections: MAX_REDIRECTIONS,
      redisOptions: { ...nodeOptions(target), connectionName },
    },
  );
  return { kind: 'cluster', client, target };
}

/**
 * Makes `client` a command connection to a standalone server: a round's commands leave in
 * one write (`coalesced-writes.ts`), and commands waiting with the connection silent for
 * `deadlineMs` fail (`silence-watch.ts`). The log store's client and the rate limits' own
 * (`openRateLimitClient`) are both made so.
 */
export function standaloneCommands(client: Redis, deadlineMs: number): void {
  coalesceWrites(client);
  watchSilence(client, deadlineMs);
}

/** The one node of a standalone server, as the reader names it. */
const STANDALONE = 'standalone';

/**
 * Where the fan-out (`wake-reader.ts`) follows streams on `connection`'s server. Its
 * subscriber connections neither reconnect nor resubscribe by themselves: the reader
 * follows its streams anew when one ends, and reads after each subscription, which
 * ioredis's silent resubscription would skip. Reads go through the command client.
 */
export function readerTopology(connection: LogConnection, name: string): ReaderTopology {
  const connectionName = `${name}:reader`;
  const subscriber: RedisOptions = {
    connectionName,
    lazyConnect: false,
    retryStrategy: () => null,
    autoResubscribe: false,
    // A subscription's few commands keep a deadline each (the command client's watch
    // would read a quiet channel as a silent link).
    commandTimeout: COMMAND_TIMEOUT_MS,
    // The first subscription waits for the connection rather than fail.
    enableOfflineQueue: true,
  };
  const xrange: ReaderTopology['xrange'] = (log, start, count) =>
    connection.client.xrange(log, start, '+', 'COUNT', count);
  if (connection.kind === 'standalone') {
    const client = connection.client;
    return {
      nodeOf: () => STANDALONE,
      refresh: () => Promise.resolve(),
      connect: () => client.duplicate(subscriber),
      xrange,
    };
  }
  const { client, target } = connection;
  return {
    nodeOf: (slot) => client.slots[slot]?.[0],
    refresh: () =>
      new Promise((resolve, reject) => {
        client.refreshSlotsCache((error) => {
          if (error === null || error === undefined) resolve();
          else reject(error);
        });
      }),
    connect: (node) => {
      const colon = node.lastIndexOf(':');
      const host = node.slice(0, colon);
      const port = Number(node.slice(colon + 1));
      return new Redis({ ...nodeOptions(target), ...subscriber, host, port });
    },
    xrange,
  };
}

/** What every connection to a node of the cluster needs: credentials and TLS. */
function nodeOptions(target: ClusterTarget): RedisOptions {
  return {
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
    ...(target.tls ? { tls: {} } : {}),
  };
}
