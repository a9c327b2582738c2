/**
 * A tail over a SQL log store (interface 4.2; decisions row 68): read a page, yield it,
 * and once caught up wait for a wake-up instead of asking again.
 *
 * Pages are bounded, so a tail of a long session holds at most one page in memory. The
 * tail ends after it delivered `to - 1`, after the record that archived the stream, on
 * its own signal, or when the store closes; it returns cleanly in every case.
 */
import type { ReadRange, StoredRecord, StreamHead, TailOptions } from '../log-store.ts';
import type { Wakeups } from './wakeups.ts';

/**
 * Records read per query while catching up. Small on purpose: a hundred tails catching
 * up at once hold a hundred pages, and the embedded service idles under 200 MB RSS.
 */
const PAGE = 64;

/** What a tail needs of its store. */
export interface TailSource {
  read(stream: string, range: ReadRange): Promise<StoredRecord[]>;
  head(stream: string): Promise<StreamHead | null>;
  readonly wakeups: Wakeups;
  /** Aborted when the store closes. */
  readonly closed: AbortSignal;
}

/** Follows `stream` from `options.from`; see `LogStore.tail`. */
export async function* follow(
  source: TailSource,
  stream: string,
  options: TailOptions,
): AsyncGenerator<StoredRecord, void, undefined> {
  const { to } = options;
  // Cursors start at 1: `from: 0` reads from the start (2.3).
  let next = Math.max(1, options.from);
  if (to !== undefined && next >= to) return;
  const signal =
    options.signal === undefined ? source.closed : AbortSignal.any([options.signal, source.closed]);
  // A function, not the property: the signal flips while this generator is suspended.
  const stopped = (): boolean => signal.aborted;
  if (stopped()) return;
  const subscription = source.wakeups.subscribe(stream);
  /** Runs a read; a read cut short by closing or aborting ends the tail instead of failing it. */
  const ask = async <T>(read: () => Promise<T>): Promise<{ value: T } | undefined> => {
    try {
      return { value: await read() };
    } catch (error) {
      if (stopped()) return undefined;
      throw error;
    }
  };
  try {
    for (;;) {
      // Forget earlier wakes before reading: a wake during the read is kept for the wait.
      subscription.clear();
      const page = await ask(() =>
        source.read(stream, { from: next, limit: PAGE, ...(to === undefined ? {} : { to }) }),
      );
      if (page === undefined) return;
      for (const record of page.value) {
        if (stopped()) return;
        yield record;
        next = record.envelope.cursor + 1;
      }
      if (to !== undefined && next >= to) return;
      if (page.value.length === PAGE) continue;
      const head = await ask(() => source.head(stream));
      if (head === undefined) return;
      // The archiving record is the last one: once it is delivered, nothing can follow.
      if (head.value?.archived === true && next > head.value.head) return;
      // Landed between the page and the head: read again rather than wait for the wake.
      if (head.value !== null && next <= head.value.head) continue;
      if (stopped()) return;
      await subscription.next(signal);
      if (stopped()) return;
    }
  } finally {
    subscription.end();
  }
}
