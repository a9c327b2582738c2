/**
 * SQL log stores assembled from their real parts (driver, wake-ups, signals) with one
 * difference: every query the store runs outside a transaction that reads records is
 * counted. Appends (a transaction, or on PostgreSQL one `log_append` call that reads
 * nothing back) are not counted; what is counted is what tails and feeds read (and any
 * `read` a test makes), which is what the fan-out must keep from growing with the number
 * of tails (issue 3, item 7). The SQLite watch's own queries are not counted either.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { systemClock } from '../../../src/clock.ts';
import type { LogStore } from '../../../src/storage/log-store.ts';
import type { SqlDriver } from '../../../src/storage/sql/driver.ts';
import { migrate } from '../../../src/storage/sql/migrate.ts';
import { openPostgresDriver } from '../../../src/storage/sql/postgres-driver.ts';
import { listenPostgres, type LogSignals } from '../../../src/storage/sql/signals.ts';
import { SqlLogStore } from '../../../src/storage/sql/sql-log-store.ts';
import { openSqliteDriver } from '../../../src/storage/sql/sqlite-driver.ts';
import { watchSqlite } from '../../../src/storage/sql/sqlite-watch.ts';
import { Wakeups } from '../../../src/storage/sql/wakeups.ts';
import { createTestSchema } from './pg-schema.ts';

export interface CountedStore {
  readonly store: LogStore;
  /** Queries run outside transactions since the store opened. */
  readonly queries: () => number;
}

export interface CountedEngine {
  readonly name: 'sqlite' | 'postgres';
  /** A new instance on the engine's one file or schema. */
  open(options?: { readonly tailBuffer?: number }): Promise<CountedStore>;
  /** Closes every opened instance and drops the file or schema. */
  cleanup(): Promise<void>;
}

function counting(driver: SqlDriver): { driver: SqlDriver; queries: () => number } {
  let queries = 0;
  return {
    driver: {
      ...driver,
      query: (sql, params) => {
        if (/\b(FROM|JOIN) records\b/.test(sql)) queries += 1;
        return driver.query(sql, params);
      },
    },
    queries: () => queries,
  };
}

async function assemble(
  opened: LogStore[],
  raw: SqlDriver,
  signalsFor: (driver: SqlDriver, wakeups: Wakeups) => Promise<LogSignals>,
  tailBuffer: number | undefined,
): Promise<CountedStore> {
  await migrate(raw, systemClock.now());
  const { driver, queries } = counting(raw);
  const wakeups = new Wakeups();
  // The signals ask on the uncounted driver: the SQLite watch is not a tail's read.
  const signals = await signalsFor(raw, wakeups);
  const store = new SqlLogStore({
    driver,
    wakeups,
    signals,
    clock: systemClock,
    ...(tailBuffer === undefined ? {} : { tailBuffer }),
  });
  opened.push(store);
  return { store, queries };
}

export async function sqliteEngine(): Promise<CountedEngine> {
  const folder = await mkdtemp(path.join(tmpdir(), 'sql-fanout-'));
  const file = path.join(folder, 'service.sqlite');
  const opened: LogStore[] = [];
  return {
    name: 'sqlite',
    open: (options = {}) =>
      assemble(
        opened,
        openSqliteDriver(file),
        (driver, wakeups) => Promise.resolve(watchSqlite(driver, wakeups, file)),
        options.tailBuffer,
      ),
    cleanup: async () => {
      await Promise.all(opened.map((store) => store.close()));
      await rm(folder, { recursive: true, force: true });
    },
  };
}

export async function postgresEngine(): Promise<CountedEngine> {
  const { url, schema, drop } = await createTestSchema();
  const opened: LogStore[] = [];
  return {
    name: 'postgres',
    open: (options = {}) =>
      assemble(
        opened,
        openPostgresDriver({ url, schema }),
        (_, wakeups) => listenPostgres({ url, schema }, wakeups),
        options.tailBuffer,
      ),
    cleanup: async () => {
      await Promise.all(opened.map((store) => store.close()));
      await drop();
    },
  };
}
