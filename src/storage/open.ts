/**
 * Chooses the backends from configuration (see the table in docs/architecture.md):
 * the control store is SQLite in `DATA_DIR` unless `DATABASE_URL` names PostgreSQL; the
 * log store lives in Redis Streams when `REDIS_URL` is set, else beside the control store.
 * The work store always lives beside the control store, in the SQL database.
 */
import type { Clock } from '../clock.ts';
import type { ControlStore } from './control-store.ts';
import type { LogStore } from './log-store.ts';
import type { SecretsKeyring } from './secret-box.ts';
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
   * The log store's Redis command client, when `REDIS_URL` is set: the rate limits count
   * through it too (`src/http/rate-limit.ts`). Closed with the log store.
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
  return {
    log,
    control: sql.control,
    work: sql.work,
    redis: log.client,
    close: async () => {
      await log.close();
      await sql.close();
    },
  };
}
