/**
 * Chooses the backends from configuration (see the table in docs/architecture.md):
 * the control store is SQLite in `DATA_DIR` unless `DATABASE_URL` names PostgreSQL; the
 * log store lives in Redis Streams when `REDIS_URL` is set, else beside the control store.
 * The work store always lives beside the control store, in the SQL database.
 */
import { Cluster } from 'ioredis';
import type { Clock } from '../clock.ts';
import type { ControlStore } from './control-store.ts';
import type { LogStore } from './log-store.ts';
import type { SecretsKeyring } from './secret-box.ts';
import { standaloneCommands } from './redis/client.ts';
import type { LogClient } from './redis/scripts.ts';
import { openRedisLogStore, type RedisLogStore } from './redis/store.ts';
import { openPostgresStores, openSqliteStores, type SqlStores } from './sql/open.ts';
import type { WorkStore } from './work-store.ts';

export interface StoreOptions {
  readonly dataDir: string;
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  /** The keys that seal secrets at rest: the current one seals, every one opens. */
  readonly secretsKey: Buffer | SecretsKeyring;
  readonly clock: Clock;
  /** Hears failures a store recovers from by itself (a lost Redis reader connection). */
  readonly onError?: (error: unknown) => void;
}

export interface Stores {
  readonly log: LogStore;
  readonly control: ControlStore;
  readonly work: WorkStore;
  /**
   * A command connection to the log's Redis, when `REDIS_URL` is set, that the rate limits
   * count through (`src/http/rate-limit.ts`): its own, with a short deadline, so a Redis
   * that went silent costs a request at most about `RATE_LIMIT_COMMAND_MS` (it then passes
   * uncounted) before its own store command meets the outage, not a whole command
   * deadline more. Closed with the stores.
   */
  readonly redis?: LogClient;
  /** Closes the log store (ending its tails), then the control and work stores. */
  close(): Promise<void>;
}

/** Opens the stores the configuration names, applying migrations. */
export async function openStores(options: StoreOptions): Promise<Stores> {
  const sql: SqlStores =
    options.databaseUrl === undefined
      ? await openSqliteStores({
          dataDir: options.dataDir,
          secretsKey: options.secretsKey,
          clock: options.clock,
        })
      : await openPostgresStores({
          url: options.databaseUrl,
          secretsKey: options.secretsKey,
          clock: options.clock,
        });
  if (options.redisUrl === undefined) return sql;
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
