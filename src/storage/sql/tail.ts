/**
 * A tail over a SQL log store (interface 4.2; decisions row 68; issue 3, item 7): it
 * catches up by reading pages from its `from`, then joins the instance's fan-out
 * (`stream-fanout.ts`) and yields every record once, in cursor order, until the
 * archiving record, `to`, an abort or the store's close, returning cleanly in each case.
 *
 * Joining without gap or duplicate: the last catch-up page tells the head at its
 * snapshot, and the tail joins as having seen `min(next - 1, head)`, never above the
 * head, so every record landing later reaches it. Records the feed already stood past
 * are read here; records it delivers again are dropped by cursor. A subscription whose
 * bounded buffer overflowed is dropped by the feed; the tail then catches up by reading
 * and joins again. Pages are bounded, so a tail of a long session holds at most one
 * page in memory while it catches up.
 */
import type { StoredRecord, TailOptions } from '../log-store.ts';
import type { LogPage } from './log-reads.ts';
import type { StreamFanout } from './stream-fanout.ts';
import { handOver, type Subscription } from '../subscription.ts';

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

/** Follows `stream` from `options.from`; see `LogStore.tail`. */
export async function* follow(
  source: TailSource,
  stream: string,
  options: TailOptions,
): AsyncGenerator<StoredRecord, void, undefined> {
  const stop = options.to ?? Number.POSITIVE_INFINITY;
  // Cursors start at 1: `from: 0` reads from the start (2.3).
  let next = Math.max(1, options.from);
  const signal =
    options.signal === undefined ? source.closed : AbortSignal.any([options.signal, source.closed]);
  // A function, not a value: the signal flips while this generator is suspended.
  const over = (): boolean => next >= stop || signal.aborted;
  if (over()) return;

  /** Reads and yields every record from `next` up to `until` (exclusive); the last page. */
  async function* readUpTo(until: number): AsyncGenerator<StoredRecord, LogPage | 'over'> {
    for (;;) {
      const to = Math.min(until, stop);
      const page = await source.page(stream, next, Number.isFinite(to) ? to : undefined, PAGE);
      for (const record of page.records) {
        if (over()) return 'over';
        yield record;
        next = record.envelope.cursor + 1;
      }
      if (over()) return 'over';
      // The archiving record is the last one: once it is delivered, nothing can follow.
      if (page.final !== null && next > page.final) return 'over';
      if (page.records.length < PAGE || next >= until) return page;
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

  /** Yields what the fan-out delivers; true at the end, false once dropped. */
  async function* fed(subscription: Subscription): AsyncGenerator<StoredRecord, boolean> {
    for (;;) {
      if (over()) return true;
      const entries = subscription.take();
      if (entries.length === 0) {
        if (subscription.dropped) return false;
        if (subscription.ended) return true;
        await subscription.wait(signal, listener);
        continue;
      }
      for (const { record, final } of entries) {
        const { cursor } = record.envelope;
        if (cursor < next) {
          // Already yielded while catching up; the archiving record still ends the tail.
          if (final) return true;
          continue;
        }
        // The feed never skips a cursor; should a gap appear, the log fills it.
        if (cursor > next && (yield* readUpTo(cursor)) === 'over') return true;
        if (over()) return true;
        yield record;
        next = cursor + 1;
        if (final || over()) return true;
      }
    }
  }

  let subscription: Subscription | undefined;
  try {
    for (;;) {
      const caught = yield* readUpTo(stop);
      if (caught === 'over') return;
      subscription = source.fanout.subscribe(stream, Math.min(next - 1, caught.head));
      // The feed stood past this tail: read what lies between.
      if (subscription.start >= next && (yield* readUpTo(subscription.start + 1)) === 'over') {
        return;
      }
      if (yield* fed(subscription)) return;
      source.fanout.unsubscribe(subscription);
      subscription = undefined;
    }
  } catch (error) {
    // A read cut short by closing or aborting ends the tail instead of failing it.
    if (!signal.aborted) throw error;
  } finally {
    if (subscription !== undefined) source.fanout.unsubscribe(subscription);
  }
}
