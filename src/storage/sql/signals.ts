/**
 * How a store instance learns of appends made through other store instances and processes.
 *
 * An append in this instance hands its records to its own fan-out after commit
 * (`stream-fanout.ts`). The two engines then differ in how they hear of everyone else's:
 * - PostgreSQL (here): the append's commit notifies `channel`, once per stream per group
 *   from the `log_append` procedure, or from the archive transaction. The payload names
 *   the stream and its new head, and carries the landed records when they fit (8000
 *   bytes, so nearly always); a process that follows no tail of the stream reads no
 *   further than its name. One dedicated client per store, and so per service
 *   process, LISTENs and wakes the named stream's feed in memory (`wakeups.ts`), which
 *   takes the carried records without a read when they continue what it delivered, reads
 *   when they do not or were not carried, and does nothing when it already delivered up
 *   to `head` (its own appends come back this way too).
 *   When that client is lost it reconnects with backoff and wakes every feed, which
 *   re-read from where they are, so a notification missed meanwhile costs nothing. No
 *   timer polls, and no tail ever polls.
 * - SQLite: `sqlite-watch.ts`.
 */
import pg from 'pg';
import { Unavailable } from '../../errors.ts';
import type { StoredRecord } from '../log-store.ts';
import type { SqlQueryable } from './driver.ts';
import { stamp } from './log-reads.ts';
import { clientConfig, type PostgresOptions } from './postgres-driver.ts';
import { pendingFromTuple } from './record-tuples.ts';
import type { Wakeups } from './wakeups.ts';

export interface LogSignals {
  /**
   * The channel appends notify (PostgreSQL), which the `log_append` procedure is given;
   * null where a doorbell rings instead (SQLite).
   */
  readonly channel: string | null;
  /**
   * Runs inside a transaction that lands records (archiving): tells other instances,
   * once it commits, that `stream` now stands at `head`.
   */
  publish(tx: SqlQueryable, stream: string, head: number): Promise<void>;
  /** Runs right after a commit that landed records: the SQLite doorbell (`sqlite-watch.ts`). */
  committed(): void;
  close(): Promise<void>;
}

const RECONNECT_MS = { first: 100, max: 5000 };

/**
 * The records a notification of `log_append` carries (migration 006): `{"h": head, "s":
 * stream, "a": at, "r": [record tuples]}`, the stream's landed records ending at `head`.
 */
function carried(payload: string): { stream: string; head: number; records: StoredRecord[] } {
  const { h: head, s: stream, a: at, r: tuples } = JSON.parse(payload) as Record<string, unknown>;
  if (
    typeof head !== 'number' ||
    !Number.isSafeInteger(head) ||
    typeof stream !== 'string' ||
    typeof at !== 'number' ||
    !Array.isArray(tuples)
  ) {
    throw new TypeError('a notification without head, stream, at and records');
  }
  const first = head - tuples.length + 1;
  return { stream, head, records: stamp(stream, first, at, tuples.map(pendingFromTuple)) };
}

/**
 * The stream a carrying notification names, read off its start as PostgreSQL's
 * `json_build_object` writes it (`{"h" : 12, "s" : "name", …`), or undefined when it
 * does not start so. Every process hears every append's notification; this spares one
 * that follows no tail of the stream from parsing the records.
 */
const HEADER = /^\{"h" : \d+, "s" : ("(?:[^"\\]|\\.)*")/;

function streamNamed(payload: string): string | undefined {
  const quoted = HEADER.exec(payload)?.[1];
  if (quoted === undefined) return undefined;
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return undefined;
  }
}

/**
 * Wakes the stream a notification names: `{"h", "s", "a", "r"}` when the records fit in
 * it, else `'<head> <stream>'`. A payload of neither form (another version of the
 * service) still wakes its stream, which then reads unconditionally; one that cannot be
 * read at all wakes every stream.
 */
function wake(wakeups: Wakeups, payload: string): void {
  if (payload.startsWith('{')) {
    const named = streamNamed(payload);
    if (named !== undefined && !wakeups.follows(named)) return;
    let told: ReturnType<typeof carried>;
    try {
      told = carried(payload);
    } catch {
      wakeups.wakeAll();
      return;
    }
    wakeups.wake(told.stream, told.head, told.records);
    return;
  }
  const match = /^(\d+) ([\s\S]*)$/.exec(payload);
  if (match?.[1] === undefined || match[2] === undefined) wakeups.wake(payload);
  else wakeups.wake(match[2], Number(match[1]));
}

/** LISTEN/NOTIFY for a PostgreSQL store; resolves once the listener is connected. */
export async function listenPostgres(
  options: PostgresOptions,
  wakeups: Wakeups,
): Promise<LogSignals> {
  // One channel per schema: stores in other schemas of the database never wake ours. A
  // channel is an identifier, at most 63 bytes: LISTEN would cut a longer one, and
  // pg_notify refuse it.
  const channel = (
    options.schema === undefined ? 'log_appended' : `log_appended_${options.schema}`
  ).slice(0, 63);
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
    channel,
    publish: async (tx, stream, head) => {
      await tx.query('SELECT pg_notify(?, ?)', [channel, `${head} ${stream}`]);
    },
    // The notification went with the commit.
    committed: () => undefined,
    close: async () => {
      closed = true;
      clearTimeout(retry);
      const current = client;
      client = undefined;
      await current?.end().catch(() => undefined);
    },
  };
}
