/**
 * The baselines of the tail latency rows of `bench/log.ts`: how each backend's own client
 * would carry a record from a writer to readers, with nothing of the store around it.
 * Each writes the same record the store would, and one reader per process fans it out in
 * memory to every tail of its stream, as the stores do:
 * - Redis: a plain XADD; one connection blocks in XREAD on every followed stream.
 * - PostgreSQL: a plain INSERT, and once it is acknowledged a NOTIFY carrying the record
 *   to one LISTEN connection (the fastest order the server allows: the commit flushes
 *   without the lock a notifying commit holds; nothing is atomic about it).
 * - SQLite: a plain INSERT in its own transaction, then a call of every tail in process.
 */
import type { DatabaseSync, StatementSync } from 'node:sqlite';
import type { Redis } from 'ioredis';
import pg from 'pg';
import type { PendingRecord } from '../src/storage/log-store.ts';
import type { TailPath } from './log-tails.ts';

/** A raw path and what it opened. */
export interface RawTails extends TailPath {
  close(): Promise<void>;
}

/** The tails of each stream, fed by one reader. */
class Followers {
  readonly #byStream = new Map<string, Set<(body: string) => void>>();

  add(stream: string, seen: (body: string) => void, signal: AbortSignal): Promise<void> {
    const set = this.#byStream.get(stream) ?? new Set();
    this.#byStream.set(stream, set);
    set.add(seen);
    return new Promise((resolve) => {
      signal.addEventListener('abort', () => {
        set.delete(seen);
        resolve();
      });
    });
  }

  deliver(stream: string, body: string): void {
    for (const seen of this.#byStream.get(stream) ?? []) seen(body);
  }

  get streams(): string[] {
    return [...this.#byStream.keys()];
  }
}

/** Redis: XADD, and one XREAD BLOCK over every followed stream. */
export function redisRawTails(
  writer: Redis,
  reader: Redis,
  prefix: string,
  fields: (record: PendingRecord) => (string | number)[],
): RawTails {
  const followers = new Followers();
  const last = new Map<string, string>();
  let open = true;
  const read = async (): Promise<void> => {
    while (open) {
      const streams = followers.streams;
      if (streams.length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      const keys = streams.map((stream) => `${prefix}tail:{${stream}}`);
      const ids = streams.map((stream) => last.get(stream) ?? '0-0');
      // Joins made meanwhile are read from the next round on, a second later at most.
      const answer = await reader
        .xread('COUNT', 1000, 'BLOCK', 1000, 'STREAMS', ...keys, ...ids)
        .catch(() => null);
      for (const [key, entries] of answer ?? []) {
        const stream = key.slice(`${prefix}tail:{`.length, -1);
        for (const [id, values] of entries) {
          last.set(stream, id);
          const body = values[values.indexOf('b') + 1];
          if (body !== undefined) followers.deliver(stream, body);
        }
      }
    }
  };
  const reading = read();
  return {
    write: async (stream, record) => {
      await writer.xadd(`${prefix}tail:{${stream}}`, '*', ...fields(record));
    },
    follow: (stream, seen, signal) => followers.add(stream, seen, signal),
    close: async () => {
      open = false;
      reader.disconnect();
      await reading;
    },
  };
}

/** PostgreSQL: INSERT, then NOTIFY with the record, to one LISTEN connection. */
export async function postgresRawTails(
  url: string,
  schema: string,
  pool: pg.Pool,
  insert: (stream: string, record: PendingRecord) => Promise<void>,
): Promise<RawTails> {
  const channel = `raw_${schema}`;
  const followers = new Followers();
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  listener.on('notification', ({ payload }) => {
    const split = payload?.indexOf('\n') ?? -1;
    if (payload !== undefined && split > 0) {
      followers.deliver(payload.slice(0, split), payload.slice(split + 1));
    }
  });
  await listener.query(`LISTEN ${channel}`);
  return {
    write: async (stream, record) => {
      await insert(stream, record);
      void pool
        .query('SELECT pg_notify($1, $2)', [channel, `${stream}\n${record.body}`])
        .catch(() => undefined);
    },
    follow: (stream, seen, signal) => followers.add(stream, seen, signal),
    close: () => listener.end(),
  };
}

/** SQLite: INSERT in a transaction, then every tail of the stream in process. */
export function sqliteRawTails(
  db: DatabaseSync,
  statement: StatementSync,
  row: (stream: string, record: PendingRecord) => (string | number | null)[],
): RawTails {
  const followers = new Followers();
  return {
    write: (stream, record) => {
      db.exec('BEGIN IMMEDIATE');
      statement.run(...row(stream, record));
      db.exec('COMMIT');
      followers.deliver(stream, record.body);
      return Promise.resolve();
    },
    follow: (stream, seen, signal) => followers.add(stream, seen, signal),
    close: () => Promise.resolve(),
  };
}
