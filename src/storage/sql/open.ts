/**
 * Opening the SQL stores: the entry `src/main.ts` wires.
 *
 * - Embedded default: `openSqliteStores({ dataDir, secretsKey })` keeps the log, control
 *   and work stores in one WAL database file, `<dataDir>/service.sqlite` (or `file`).
 * - Server: `openPostgresStores({ url, secretsKey })`, each store with its own pool; the
 *   log store also holds one listening connection for tails, and the work store one for
 *   due marks.
 *
 * The work store always sits beside the control store: a checkpoint moves its counted
 * cursor and the control store's usage row in one transaction.
 *
 * Every opener applies the pending migrations first (`migrate.ts`), so a fresh folder or
 * database is ready when it resolves. Each opened store owns its connections and
 * releases them on `close()`. The secrets key is the caller's to generate and keep.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { systemClock, type Clock } from '../../clock.ts';
import type { ControlStore } from '../control-store.ts';
import type { LogStore } from '../log-store.ts';
import { keyringOf, type SecretsKeyring } from '../secret-box.ts';
import type { WorkStore } from '../work-store.ts';
import type { SqlDriver } from './driver.ts';
import { migrate } from './migrate.ts';
import { openPostgresDriver, type PostgresOptions } from './postgres-driver.ts';
import { listenPostgres } from './signals.ts';
import { SqlControlStore } from './sql-control-store.ts';
import { SqlLogStore } from './sql-log-store.ts';
import { SqlWorkStore } from './sql-work-store.ts';
import { openSqliteDriver, type SqliteDurability } from './sqlite-driver.ts';
import { watchSqlite } from './sqlite-watch.ts';
import { Wakeups } from './wakeups.ts';

export type { PostgresOptions } from './postgres-driver.ts';

/** The database file's name inside the data folder. */
export const SQLITE_FILE = 'service.sqlite';

export interface SqliteOptions {
  /** The database file; created with its folder when absent. */
  readonly file: string;
  /** Stamps `at`, `created`, `updated` (default: the system clock). */
  readonly clock?: Clock;
}

/** Options of a control store: it seals secret values under `secretsKey`. */
export interface SecretsOption {
  /** 32 bytes, or a ring of them; values are sealed under keys derived from it (`secret-box.ts`). */
  readonly secretsKey: Buffer | SecretsKeyring;
}

export interface SqlStores {
  readonly log: LogStore;
  readonly control: ControlStore;
  readonly work: WorkStore;
  /** Closes the three stores. */
  close(): Promise<void>;
}

/** Refuses a wrong key before any connection is opened. */
function checkKey(options: SecretsOption): void {
  keyringOf(options.secretsKey);
}

async function ready(driver: SqlDriver, clock: Clock): Promise<SqlDriver> {
  try {
    await migrate(driver, clock.now());
    return driver;
  } catch (error) {
    await driver.close();
    throw error;
  }
}

async function sqliteDriver(
  options: SqliteOptions,
  durability: SqliteDurability = 'full',
): Promise<SqlDriver> {
  await mkdir(path.dirname(path.resolve(options.file)), { recursive: true, mode: 0o700 });
  // Owner only: created here before SQLite opens it, whatever the umask;
  // SQLite gives its -wal and -shm files the database file's mode.
  await writeFile(options.file, '', { flag: 'a', mode: 0o600 });
  return ready(openSqliteDriver(options.file, durability), options.clock ?? systemClock);
}

/** A log store on a SQLite file. */
export async function openSqliteLogStore(options: SqliteOptions): Promise<LogStore> {
  const driver = await sqliteDriver(options);
  const wakeups = new Wakeups();
  const signals = watchSqlite(driver, wakeups, options.file);
  return new SqlLogStore({ driver, wakeups, signals, clock: options.clock ?? systemClock });
}

/** A control store on a SQLite file. */
export async function openSqliteControlStore(
  options: SqliteOptions & SecretsOption,
): Promise<ControlStore> {
  checkKey(options);
  const driver = await sqliteDriver(options);
  return new SqlControlStore({
    driver,
    secretsKey: options.secretsKey,
    clock: options.clock ?? systemClock,
  });
}

/** A work store on a SQLite file. */
export async function openSqliteWorkStore(options: SqliteOptions): Promise<WorkStore> {
  // `normal` durability: without it every due mark, the one write a driving append adds,
  // held the event loop for an fsync (2.5 ms each in `npm run bench`; node:sqlite is
  // synchronous). What the work store keeps is the runtime's own bookkeeping, rebuilt or
  // redone after a power cut: a due mark is committed before its record's append, so on
  // one file the append's own fsync makes the mark durable too, and with a Redis log the
  // record is only as durable as Redis's append-only file (fsynced every second by
  // default); a lost lease lapses; a lost saved turn state is rebuilt from the log; a
  // usage checkpoint commits its counts and how far it counted in one transaction, so a
  // lost one is counted again from where the last kept one stopped, never twice.
  return new SqlWorkStore(await sqliteDriver(options, 'normal'));
}

/** A log store on PostgreSQL. */
export async function openPostgresLogStore(
  options: PostgresOptions & { readonly clock?: Clock },
): Promise<LogStore> {
  const clock = options.clock ?? systemClock;
  const driver = await ready(openPostgresDriver(options), clock);
  const wakeups = new Wakeups();
  try {
    const signals = await listenPostgres(options, wakeups);
    return new SqlLogStore({ driver, wakeups, signals, clock });
  } catch (error) {
    await driver.close();
    throw error;
  }
}

/** A control store on PostgreSQL. */
export async function openPostgresControlStore(
  options: PostgresOptions & SecretsOption & { readonly clock?: Clock },
): Promise<ControlStore> {
  checkKey(options);
  const clock = options.clock ?? systemClock;
  const driver = await ready(openPostgresDriver({ ...options, max: options.max ?? 5 }), clock);
  return new SqlControlStore({ driver, secretsKey: options.secretsKey, clock });
}

/** A work store on PostgreSQL. */
export async function openPostgresWorkStore(
  options: PostgresOptions & { readonly clock?: Clock },
): Promise<WorkStore> {
  const clock = options.clock ?? systemClock;
  const driver = await ready(openPostgresDriver({ ...options, max: options.max ?? 5 }), clock);
  // Due marks on a connection of their own (see `SqlWorkStore`).
  return new SqlWorkStore(driver, openPostgresDriver({ ...options, max: 1 }));
}

/** Opens the stores one after the other; when one fails, closes those already open. */
async function assemble(
  openLog: () => Promise<LogStore>,
  openControl: () => Promise<ControlStore>,
  openWork: () => Promise<WorkStore>,
): Promise<SqlStores> {
  const log = await openLog();
  const opened: { close(): Promise<void> }[] = [log];
  const closeOpened = async (error: unknown): Promise<never> => {
    await Promise.all(opened.map((store) => store.close()));
    throw error;
  };
  const control = await openControl().catch(closeOpened);
  opened.push(control);
  const work = await openWork().catch(closeOpened);
  return {
    log,
    control,
    work,
    close: async () => {
      await Promise.all([log.close(), control.close(), work.close()]);
    },
  };
}

/** The three stores in one SQLite file: `file`, or `service.sqlite` in `dataDir`. */
export async function openSqliteStores(
  options: ({ readonly dataDir: string } | { readonly file: string }) &
    SecretsOption & { readonly clock?: Clock },
): Promise<SqlStores> {
  checkKey(options);
  const file = 'file' in options ? options.file : path.join(options.dataDir, SQLITE_FILE);
  const settings = {
    file,
    secretsKey: options.secretsKey,
    ...(options.clock ? { clock: options.clock } : {}),
  };
  return assemble(
    () => openSqliteLogStore(settings),
    () => openSqliteControlStore(settings),
    () => openSqliteWorkStore(settings),
  );
}

/** The three stores on one PostgreSQL database (and schema). */
export async function openPostgresStores(
  options: PostgresOptions & SecretsOption & { readonly clock?: Clock },
): Promise<SqlStores> {
  checkKey(options);
  return assemble(
    () => openPostgresLogStore(options),
    () => openPostgresControlStore(options),
    () => openPostgresWorkStore(options),
  );
}
