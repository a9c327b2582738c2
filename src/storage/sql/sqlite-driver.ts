/**
 * The SQLite driver: one `node:sqlite` connection to a WAL database file.
 *
 * `node:sqlite` is synchronous, so two things are done here by hand:
 * - One connection runs one thing at a time: every query and transaction of this
 *   instance waits its turn on a queue, so a read never sees another call's uncommitted
 *   writes and transactions never nest.
 * - A burst of queued work never holds the event loop for long: between calls, the loop
 *   gets a turn every few milliseconds (`loop-turns.ts`).
 * - Lock waits never block the event loop. SQLite's own busy_timeout sleeps inside the
 *   call, which would freeze the process and, against a transaction held by another
 *   instance in this same process, deadlock until it expires. So busy_timeout stays 0
 *   and a busy `BEGIN IMMEDIATE` (or read) is retried here after a short async pause.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { Unavailable } from '../../errors.ts';
import type { SqlDialect, SqlDriver, SqlQueryable, SqlRow, SqlValue } from './driver.ts';
import { loopTurns } from './loop-turns.ts';
import { WalFlusher } from './wal-flusher.ts';

const SQLITE_BUSY = 5;
/** How long a write waits for another connection's write lock before giving up. */
const LOCK_WAIT_MS = 10_000;
/** Prepared statements kept per connection; the stores use a few dozen distinct texts. */
const STATEMENT_CACHE = 256;

const dialect: SqlDialect = { name: 'sqlite', lockRows: '' };

function isBusy(error: unknown): boolean {
  if (typeof error !== 'object' || error === null || !('errcode' in error)) return false;
  const { errcode } = error;
  // Extended codes (SQLITE_BUSY_SNAPSHOT, …) keep the primary code in the low byte.
  return typeof errcode === 'number' && (errcode & 0xff) === SQLITE_BUSY;
}

/** Runs synchronous `work`, answering its throw as a rejection. */
function settle<T>(work: () => T): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

function pause(attempt: number): Promise<void> {
  const ms = Math.min(25, 2 ** attempt) * (0.5 + Math.random());
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * How a connection's commits reach the disk. `full`: each commit is fsynced before it
 * returns, so it survives a power cut, not only a crash of this process; the log and
 * control stores commit this way, since what they commit is acknowledged to a client. WAL
 * keeps that to one fsync of the log per commit; readers never wait for it. `normal`: a
 * commit survives a crash of the process at once and a power cut once the write-ahead
 * log is next fsynced (by a `full` commit on the same file, which covers every frame
 * before it, or a checkpoint); an interrupted commit is never half applied. The work
 * store commits this way (see `openSqliteWorkStore`).
 */
export type SqliteDurability = 'full' | 'normal';

/** Opens (creating if absent) the database file and sets it up for the stores. */
export function openSqliteDriver(file: string, durability: SqliteDurability = 'full'): SqlDriver {
  const db = new DatabaseSync(file, { timeout: 0 });
  db.exec('PRAGMA journal_mode = WAL');
  db.exec(`PRAGMA synchronous = ${durability === 'full' ? 'FULL' : 'NORMAL'}`);
  db.exec('PRAGMA busy_timeout = 0');
  // A `normal` connection's log is flushed off the loop before its checkpoints need it.
  const flusher = durability === 'normal' ? new WalFlusher(file) : undefined;
  const statements = new Map<string, StatementSync>();
  let queue: Promise<unknown> = Promise.resolve();
  let closed = false;
  let closing: Promise<void> | undefined;

  const prepare = (sql: string): StatementSync => {
    let statement = statements.get(sql);
    if (statement === undefined) {
      if (statements.size >= STATEMENT_CACHE) statements.clear();
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  const run = (sql: string, params: readonly SqlValue[]): SqlRow[] => prepare(sql).all(...params);

  /**
   * Runs `task` once everything queued before it on this connection has finished, and the
   * event loop has had a turn if SQLite work held it too long (`loop-turns.ts`).
   */
  const serialise = <T>(task: () => Promise<T>): Promise<T> => {
    const start = (): Promise<T> => {
      if (closed) throw new Unavailable('store_closed', 'the SQLite store is closed');
      flusher?.wrote();
      return task();
    };
    const result = queue.then(() => loopTurns.wait()?.then(start) ?? start());
    queue = result.catch(() => undefined);
    return result;
  };

  /** Retries `attempt` while another connection holds the lock, up to LOCK_WAIT_MS. */
  const whileBusy = async <T>(attempt: () => Promise<T>): Promise<T> => {
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (let tries = 0; ; tries++) {
      try {
        return await attempt();
      } catch (error) {
        if (!isBusy(error)) throw error;
        if (Date.now() > deadline) {
          throw new Unavailable('store_busy', 'the SQLite database stayed locked', {
            cause: error,
          });
        }
        await pause(tries);
      }
    }
  };

  const transactionOnce = async <T>(work: (tx: SqlQueryable) => Promise<T>): Promise<T> => {
    db.exec('BEGIN IMMEDIATE');
    let open = true;
    const live = (): void => {
      if (!open) throw new Error('query on a finished transaction');
    };
    const tx: SqlQueryable = {
      query: (sql, params = []) =>
        settle(() => {
          live();
          return run(sql, params);
        }),
      exec: (sql) =>
        settle(() => {
          live();
          db.exec(sql);
        }),
    };
    try {
      const result = await work(tx);
      db.exec('COMMIT');
      return result;
    } catch (error) {
      if (db.isTransaction) db.exec('ROLLBACK');
      throw error;
    } finally {
      open = false;
    }
  };

  return {
    dialect,
    query: (sql, params = []) => serialise(() => whileBusy(() => settle(() => run(sql, params)))),
    transaction: (work) => serialise(() => whileBusy(() => transactionOnce(work))),
    exec: (sql) =>
      serialise(() =>
        whileBusy(() =>
          settle(() => {
            db.exec(sql);
          }),
        ),
      ),
    close: () => {
      closing ??= serialise(() => {
        closed = true;
        statements.clear();
        db.close();
        return flusher?.close() ?? Promise.resolve();
      });
      return closing;
    },
  };
}
