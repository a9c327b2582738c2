/**
 * How a store instance learns of appends made through other store instances and processes.
 *
 * An append in this instance hands its records to its own fan-out after commit
 * (`stream-fanout.ts`). The two engines then differ in how they hear of everyone else's:
 * - PostgreSQL: the append transaction runs `pg_notify(channel, '<head> <stream>')`,
 *   delivered at commit; one dedicated client per store LISTENs and wakes the stream's
 *   feed, which skips the read when it already delivered up to `head` (its own appends
 *   come back this way too). When that client is lost it reconnects with backoff and
 *   wakes every feed, which re-read from where they are, so a notification missed
 *   meanwhile costs nothing. No timer polls.
 * - SQLite: the service is the only process on its file, so there is nothing to hear in
 *   normal running. For another process on the same file (a second instance, a tool), a
 *   watch asks `PRAGMA data_version` (which moves when another connection commits) once a
 *   second, and only while some stream is followed; a change wakes every feed.
 */
import pg from 'pg';
import { Unavailable } from '../../errors.ts';
import type { SqlDriver, SqlQueryable } from './driver.ts';
import { int } from './driver.ts';
import { clientConfig, type PostgresOptions } from './postgres-driver.ts';
import type { Wakeups } from './wakeups.ts';

export interface LogSignals {
  /**
   * Runs inside the append transaction: tells other instances, once it commits, that
   * `stream` now stands at `head`.
   */
  publish(tx: SqlQueryable, stream: string, head: number): Promise<void>;
  close(): Promise<void>;
}

const SQLITE_WATCH_MS = 1000;
const RECONNECT_MS = { first: 100, max: 5000 };

/** The `data_version` watch of a SQLite store. */
export function watchSqlite(driver: SqlDriver, wakeups: Wakeups): LogSignals {
  let seen: number | undefined;
  const timer = setInterval(() => {
    if (wakeups.idle) {
      seen = undefined;
      return;
    }
    driver.query('PRAGMA data_version').then(
      (rows) => {
        const version = rows[0] === undefined ? 0 : int(rows[0], 'data_version');
        // No baseline yet (the first waiting tick): a commit may have slipped in since the
        // feeds last read, so wake them once; after that only a moved version wakes.
        if (version !== seen) wakeups.wakeAll();
        seen = version;
      },
      // A closed or busy database: the next tick asks again, the feeds keep waiting.
      () => undefined,
    );
  }, SQLITE_WATCH_MS);
  timer.unref();
  return {
    publish: () => Promise.resolve(),
    close: () => {
      clearInterval(timer);
      return Promise.resolve();
    },
  };
}

/**
 * Wakes the stream a notification names. A payload without a leading head (another
 * version of the service) still wakes its stream, which then reads unconditionally.
 */
function wake(wakeups: Wakeups, payload: string): void {
  const match = /^(\d+) ([\s\S]*)$/.exec(payload);
  if (match?.[1] === undefined || match[2] === undefined) wakeups.wake(payload);
  else wakeups.wake(match[2], Number(match[1]));
}

/** LISTEN/NOTIFY for a PostgreSQL store; resolves once the listener is connected. */
export async function listenPostgres(
  options: PostgresOptions,
  wakeups: Wakeups,
): Promise<LogSignals> {
  // One channel per schema: stores in other schemas of the database never wake ours.
  const channel = options.schema === undefined ? 'log_appended' : `log_appended_${options.schema}`;
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  let delay = RECONNECT_MS.first;

  const connect = async (): Promise<void> => {
    const next = new pg.Client(clientConfig(options));
    next.on('notification', (message) => {
      if (message.payload !== undefined) wake(wakeups, message.payload);
    });
    next.on('error', () => {
      lost(next);
    });
    next.on('end', () => {
      lost(next);
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${channel}`);
    } catch (error) {
      await next.end().catch(() => undefined);
      throw error;
    }
    // Closed while connecting: nobody will end this client but us.
    if (closed) await next.end().catch(() => undefined);
    else client = next;
  };

  const lost = (which: pg.Client): void => {
    if (closed || which !== client) return;
    client = undefined;
    which.end().catch(() => undefined);
    schedule();
  };

  const schedule = (): void => {
    retry = setTimeout(() => {
      connect().then(
        () => {
          delay = RECONNECT_MS.first;
          wakeups.wakeAll();
        },
        () => {
          delay = Math.min(delay * 2, RECONNECT_MS.max);
          if (!closed) schedule();
        },
      );
    }, delay);
    retry.unref();
  };

  try {
    await connect();
  } catch (error) {
    throw new Unavailable('store_unavailable', 'PostgreSQL does not answer the tail listener', {
      cause: error,
    });
  }
  return {
    publish: async (tx, stream, head) => {
      await tx.query('SELECT pg_notify(?, ?)', [channel, `${head} ${stream}`]);
    },
    close: async () => {
      closed = true;
      clearTimeout(retry);
      const current = client;
      client = undefined;
      await current?.end().catch(() => undefined);
    },
  };
}
