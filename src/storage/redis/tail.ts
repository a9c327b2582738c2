/**
 * The Redis store's side of a tail (`../follow.ts` runs the loop): catch-up pages read
 * with XRANGE, the head and archived flag read from the stream's meta hash when the tail
 * joins, and the instance's shared reader (`wake-reader.ts`: one subscriber connection
 * per master) as the fan-out.
 */
import type { StoredRecord, StreamHead, TailOptions } from '../log-store.ts';
import { followLog, type TailBackend, type TailPage } from '../follow.ts';
import type { Subscription } from '../subscription.ts';
import type { LogEntry } from './entries.ts';

/** Records per catch-up read. */
const PAGE = 500;

/** What a tail needs of its store. */
export interface TailSource {
  /** Aborted when the store closes. */
  readonly closing: AbortSignal;
  /** Entries from `from` (inclusive) to `to` (exclusive), at most `limit`, in cursor order. */
  range(stream: string, from: number, to: number, limit: number): Promise<LogEntry[]>;
  head(stream: string): Promise<StreamHead | null>;
  subscribe(stream: string, seen: number): Subscription;
  unsubscribe(subscription: Subscription): void;
}

/**
 * `LogStore.tail` over `source`. The backend the loop runs on is made here once per
 * store, not once per tail: every open tail would hold its functions.
 */
export function redisTail(
  source: TailSource,
): (stream: string, options: TailOptions) => AsyncIterableIterator<StoredRecord, void, undefined> {
  const backend: TailBackend<TailPage> = {
    pageSize: PAGE,
    closed: source.closing,
    read: async (name, from, to, limit) => {
      const entries = await source.range(name, from, to ?? Number.POSITIVE_INFINITY, limit);
      const final = entries.find((entry) => entry.final);
      return {
        records: entries.map((entry) => entry.record),
        final: final === undefined ? null : final.record.envelope.cursor,
      };
    },
    joinPoint: async (name) => {
      const head = await source.head(name);
      // The archiving record is the last one: an archived stream's head is its cursor.
      const at = head?.head ?? 0;
      return { head: at, final: head?.archived === true ? at : null };
    },
    subscribe: (name, seen) => source.subscribe(name, seen),
    unsubscribe: (subscription) => {
      source.unsubscribe(subscription);
    },
  };
  return (stream, options) => followLog(backend, stream, options);
}
