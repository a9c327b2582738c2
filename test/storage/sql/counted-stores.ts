/**
 * SQL log stores assembled from their real parts (driver, wake-ups, signals) with one
 * difference: what the store asks of its database is counted. `queries` counts the
 * statements outside transactions that read records: what tails and feeds read (and any
 * `read` a test makes), which is what the fan-out must keep from growing with the number
 * of tails. `writes` counts the writes appends and archives make: a
 * transaction, or on PostgreSQL a call of `log_append`. The SQLite
 * watch's own queries are not counted.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { systemClock, type Clock } from '../../../src/clock.ts';
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
  /** Reads of records outside transactions since the store opened. */
  readonly queries: () => number;
  /** Transactions and `log_append` calls since the store opened. */
  readonly writes: () => number;
  /** Statements outside transactions, of any kind, since the store opened. */
  readonly statements: () => number;
}

export interface OpenOptions {
  readonly tailBuffer?: number;
  /** The clock that stamps `at`; the system's by default. */
  readonly clock?: Clock;
}

export interface CountedEngine {
  readonly name: 'sqlite' | 'postgres';
  /** A new instance on the engine's one file or schema. */
  open(options?: OpenOptions): Promise<CountedStore>;
  /** Closes every opened instance and drops the file or schema. */
  cleanup(): Promise<void>;
}

interface Counts {
  queries: number;
  writes: number;
  statements: number;
}

function counting(driver: SqlDriver): { driver: SqlDriver; counts: Counts } {
  const counts: Counts = { queries: 0, writes: 0, statements: 0 };
  return {
    driver: {
      ...driver,
      query: (sql, params) => {
        counts.statements += 1;
        if (/\b(FROM|JOIN) records\b/.test(sql)) counts.queries += 1;
        if (sql.startsWith('CALL log_append')) counts.writes += 1;
        return driver.query(sql, params);
      },
      transaction: (work) => {
        counts.writes += 1;
        return driver.transaction(work);
      },
    },
    counts,
  };
}

async function assemble(
  opened: LogStore[],
  raw: SqlDriver,
  signalsFor: (driver: SqlDriver, wakeups: Wakeups) => Promise<LogSignals>,
  { tailBuffer, clock = systemClock }: OpenOptions,
): Promise<CountedStore> {
  await migrate(raw, systemClock.now());
  const { driver, counts } = counting(raw);
  const wakeups = new Wakeups();
  // The signals ask on the uncounted driver: the SQLite watch is not a tail's read.
  const signals = await signalsFor(raw, wakeups);
  const store = new SqlLogStore({
    driver,
    wakeups,
    signals,
    clock,
    ...(tailBuffer === undefined ? {} : { tailBuffer }),
  });
  opened.push(store);
  return {
    store,
    queries: () => counts.queries,
    writes: () => counts.writes,
    statements: () => counts.statements,
  };
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
        options,
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
        options,
      ),
    cleanup: async () => {
      await Promise.all(opened.map((store) => store.close()));
      await drop();
    },
  };
}
