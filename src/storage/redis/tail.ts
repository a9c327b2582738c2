/**
 * A tail over the Redis log (interface 4.2, decisions row 68): it catches up with XRANGE
 * from its `from`, then joins the instance's shared reader, and yields every record
 * once, in cursor order, until the archiving record, `to`, an abort or the store's close.
 *
 * Joining without gap or duplicate: the tail reads the head after catching up and joins
 * the fan-out as having seen `min(next - 1, head)`, which is never above the head, so
 * every record landing later reaches it. Records the reader already stood past are read
 * with XRANGE; records it delivers again are dropped by cursor. Any gap (which the
 * fan-out never makes, but a fallback read might) is filled with XRANGE before the next
 * record is yielded. A subscription whose bounded buffer overflowed is dropped by the
 * reader; the tail then catches up with XRANGE again and rejoins.
 */
import type { StoredRecord, StreamHead, TailOptions } from '../log-store.ts';
import type { LogEntry } from './entries.ts';
import { handOver, type Subscription } from '../subscription.ts';

/** Records per catch-up read. */
const PAGE = 500;

/** What a tail needs of its store. */
export interface TailSource {
  readonly closed: boolean;
  /** Entries from `from` (inclusive) to `to` (exclusive), at most `limit`, in cursor order. */
  range(stream: string, from: number, to: number, limit: number): Promise<LogEntry[]>;
  head(stream: string): Promise<StreamHead | null>;
  subscribe(stream: string, seen: number): Subscription;
  unsubscribe(subscription: Subscription): void;
}

/** Follows `stream` as `LogStore.tail` documents. */
export async function* tailLog(
  source: TailSource,
  stream: string,
  options: TailOptions,
): AsyncGenerator<StoredRecord> {
  const { signal } = options;
  const stop = options.to ?? Number.POSITIVE_INFINITY;
  let next = Math.max(options.from, 1);
  const over = () => next >= stop || signal?.aborted === true || source.closed;

  /** Reads and yields every record from `next` up to `until` (exclusive); true at the end. */
  async function* readUpTo(until: number): AsyncGenerator<StoredRecord, boolean> {
    for (;;) {
      if (over()) return true;
      const page = await source.range(stream, next, Math.min(until, stop), PAGE);
      for (const entry of page) {
        yield entry.record;
        next = entry.record.envelope.cursor + 1;
        if (entry.final || over()) return true;
      }
      if (page.length < PAGE) return false;
    }
  }

  // Records that land while the tail waits go straight to `options.deliver`.
  const listener = handOver(options.deliver, {
    next: () => next,
    stop,
    over,
    passed: (cursor) => {
      next = cursor + 1;
    },
  });

  try {
    for (;;) {
      // Catch up, then join the fan-out (again, after an overflow).
      if (yield* readUpTo(Number.POSITIVE_INFINITY)) return;
      const head = await source.head(stream);
      // The archiving record lies behind `from`: nothing will ever come.
      if (head?.archived === true && next > head.head) return;
      const subscription = source.subscribe(stream, Math.min(next - 1, head?.head ?? 0));
      const end = () => {
        subscription.end();
      };
      signal?.addEventListener('abort', end, { once: true });
      try {
        if (yield* readUpTo(subscription.start + 1)) return;
        if (yield* follow(subscription)) return;
      } finally {
        signal?.removeEventListener('abort', end);
        source.unsubscribe(subscription);
      }
    }
  } catch (error) {
    // A read cut short by close() ends the tail as close() documents.
    if (!source.closed) throw error;
  }

  /** Yields what the fan-out delivers; true at the end, false after an overflow. */
  async function* follow(subscription: Subscription): AsyncGenerator<StoredRecord, boolean> {
    for (;;) {
      if (over()) return true;
      const entries = subscription.take();
      if (entries.length === 0) {
        if (subscription.dropped) return false;
        if (subscription.ended) return true;
        await subscription.wait(undefined, listener);
        continue;
      }
      for (const entry of entries) {
        const { cursor } = entry.record.envelope;
        if (cursor < next) {
          // Already yielded, or before `from`; the archiving record still ends the tail.
          if (entry.final) return true;
          continue;
        }
        if (cursor > next && (yield* readUpTo(cursor))) return true;
        yield entry.record;
        next = cursor + 1;
        if (entry.final || over()) return true;
      }
    }
  }
}
