/**
 * Chooses the backends from configuration (see the table in docs/architecture.md):
 * the control store is SQLite in `DATA_DIR` unless `DATABASE_URL` names PostgreSQL; the
 * log store lives in Redis Streams when `REDIS_URL` is set, else beside the control store.
 * The work store always lives beside the control store, in the SQL database. The Redis
 * half is loaded only when `REDIS_URL` is set (`redis/open.ts`).
 */
import { openPostgresStores, openSqliteStores, type SqlStores } from './sql/open.ts';
import type { StoreOptions, Stores } from './stores.ts';

export type { StoreOptions, Stores } from './stores.ts';

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
  // Loaded only for a log in Redis: ioredis and its command table stay out of the rest.
  const { withRedisLog } = await import('./redis/open.ts');
  return withRedisLog(sql, { ...options, redisUrl: options.redisUrl });
}
