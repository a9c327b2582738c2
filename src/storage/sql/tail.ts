/**
 * The SQL stores' side of a tail (`../follow.ts` runs the loop): catch-up pages read from
 * the `streams` and `records` tables, each telling the head and the archiving record at
 * its snapshot, so joining needs no read of its own; and the instance's fan-out
 * (`stream-fanout.ts`), which `LISTEN/NOTIFY` (PostgreSQL) or the doorbell file (SQLite)
 * wakes.
 */
import type { StoredRecord, TailOptions } from '../log-store.ts';
import { followLog, type TailBackend } from '../follow.ts';
import type { LogPage } from './log-reads.ts';
import type { StreamFanout } from './stream-fanout.ts';

/**
 * Records read per query while catching up. Small on purpose: a hundred tails catching
 * up at once hold a hundred pages, and the embedded service idles under 200 MB RSS.
 */
const PAGE = 64;

/** What a tail needs of its store. */
export interface TailSource {
  /** Records from `from` (inclusive) to `to` (exclusive) when given, at most `limit`. */
  page(stream: string, from: number, to: number | undefined, limit: number): Promise<LogPage>;
  readonly fanout: Pick<StreamFanout, 'subscribe' | 'unsubscribe'>;
  /** Aborted when the store closes. */
  readonly closed: AbortSignal;
}

/**
 * `LogStore.tail` over `source`. The backend the loop runs on is made here once per
 * store, not once per tail: every open tail would hold its functions.
 */
export function sqlTail(
  source: TailSource,
): (stream: string, options: TailOptions) => AsyncIterableIterator<StoredRecord, void, undefined> {
  const backend: TailBackend<LogPage> = {
    pageSize: PAGE,
    closed: source.closed,
    read: (name, from, to, limit) => source.page(name, from, to, limit),
    joinPoint: (_name, last) => Promise.resolve(last),
    subscribe: (name, seen) => source.fanout.subscribe(name, seen),
    unsubscribe: (subscription) => {
      source.fanout.unsubscribe(subscription);
    },
  };
  return (stream, options) => followLog(backend, stream, options);
}
