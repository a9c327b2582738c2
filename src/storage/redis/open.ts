/**
 * The stores with the log in Redis (`open.ts`, loaded by it only when `REDIS_URL` is set):
 * the log store, and the rate limits' own connection to the same Redis.
 */
import { Cluster } from 'ioredis';
import type { StoreOptions, Stores } from '../stores.ts';
import type { SqlStores } from '../sql/open.ts';
import { standaloneCommands } from './client.ts';
import type { LogClient } from './scripts.ts';
import { openRedisLogStore, type RedisLogStore } from './store.ts';

/** `sql`'s control and work stores, with the log in the Redis `options.redisUrl` names. */
export async function withRedisLog(
  sql: SqlStores,
  options: StoreOptions & { readonly redisUrl: string },
): Promise<Stores> {
  let log: RedisLogStore;
  try {
    // No clock: `at` comes from Redis TIME inside the append script (decisions row 13).
    log = await openRedisLogStore({
      url: options.redisUrl,
      ...(options.onError === undefined ? {} : { onError: options.onError }),
    });
  } catch (error) {
    await sql.close();
    throw error;
  }
  let counting: LogClient;
  try {
    counting = await openRateLimitClient(log.client);
  } catch (error) {
    await log.close();
    await sql.close();
    throw error;
  }
  return {
    log,
    control: sql.control,
    work: sql.work,
    redis: counting,
    close: async () => {
      counting.disconnect();
      await log.close();
      await sql.close();
    },
  };
}

/** How long a rate-limit count may wait for Redis before its request passes uncounted, ms. */
const RATE_LIMIT_COMMAND_MS = 250;

/**
 * Opens a connection like `client`'s (the same node or nodes and settings) for the rate
 * limits, with a deadline of its own (see `Stores.redis`): on a standalone server a
 * watch of the connection (`silence-watch.ts`), which fails the counts waiting on it
 * once it has said nothing for `RATE_LIMIT_COMMAND_MS`, and reconnects.
 */
export async function openRateLimitClient(client: LogClient): Promise<LogClient> {
  const name = client instanceof Cluster ? undefined : client.options.connectionName;
  const counting =
    client instanceof Cluster
      ? client.duplicate(undefined, {
          redisOptions: { ...client.options.redisOptions, commandTimeout: RATE_LIMIT_COMMAND_MS },
        })
      : client.duplicate(name === undefined ? {} : { connectionName: `${name}:rate-limit` });
  // Its outages are the log client's too, which reports them (`onError`); while it is
  // down, requests pass uncounted.
  counting.on('error', () => undefined);
  if (!(counting instanceof Cluster)) standaloneCommands(counting, RATE_LIMIT_COMMAND_MS);
  try {
    await counting.connect();
  } catch (error) {
    counting.disconnect();
    throw error;
  }
  return counting;
}
