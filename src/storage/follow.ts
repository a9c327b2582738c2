/**
 * The one loop every log backend's tail runs (interface 4.2, decisions row 68): it
 * catches up by reading pages from its `from`, then joins the backend's fan-out and
 * yields every record once, in cursor order, until the archiving record, `to`, an abort
 * or the store's close, returning cleanly in each case. A backend gives it its reads, the
 * point to join at, and its fan-out (a Redis stream reader, or the SQL stores' feed that
 * `LISTEN/NOTIFY` and the SQLite doorbell wake), whose `Subscription` is what the tail
 * waits on.
 *
 * Joining without gap or duplicate: the tail joins as having seen `min(next - 1, head)`,
 * never above the head, so every record landing later reaches it. Records the fan-out
 * already stood past are read here; records it delivers again are dropped by cursor; a
 * gap (which the fan-out never makes) is filled by a read before the next record is
 * yielded. A subscription whose bounded buffer overflowed is dropped by the fan-out; the
 * tail then catches up by reading and joins again. Pages are bounded in records and in
 * bytes (`page-sizer.ts`), so a tail of a long session holds at most one page in memory
 * while it catches up.
 */
import { PageSizer } from './page-sizer.ts';
import type { StoredRecord, TailOptions } from './log-store.ts';
import { handOver, type Listener, type Subscription, type TailPosition } from './subscription.ts';

/** One catch-up read. */
export interface TailPage {
  readonly records: readonly StoredRecord[];
  /** The archiving record's cursor when the read saw the stream archived, else null. */
  readonly final: number | null;
}

/** Where a caught-up tail joins the fan-out. */
export interface JoinPoint {
  /** The stream's head; 0 for a stream with no record. */
  readonly head: number;
  /** The archiving record's cursor, or null while the stream is open. */
  readonly final: number | null;
}

/** What one backend gives the loop. */
export interface TailBackend<P extends TailPage> {
  /** Records per catch-up read, at most (`page-sizer.ts` starts lower and bounds bytes). */
  readonly pageSize: number;
  /** Aborted when the store closes: a read it cuts short ends the tail instead of failing it. */
  readonly closed: AbortSignal;
  /** Records from `from` up to `to` (exclusive; undefined: no bound), at most `limit`. */
  read(stream: string, from: number, to: number | undefined, limit: number): Promise<P>;
  /** The head and archiving record as of `last`, the page that ended the catch-up, or later. */
  joinPoint(stream: string, last: P): Promise<JoinPoint>;
  subscribe(stream: string, seen: number): Subscription;
  unsubscribe(subscription: Subscription): void;
}

/** Follows `stream` from `options.from` over `backend`; see `LogStore.tail`. */
export function followLog<P extends TailPage>(
  backend: TailBackend<P>,
  stream: string,
  options: TailOptions,
): AsyncGenerator<StoredRecord, void, undefined> {
  return new Follower(backend, stream, options).records();
}

/**
 * One tail's loop. Its state lives in fields and its steps are methods, not closures over
 * a generator's locals: every open tail holds what its loop holds while it waits.
 */
class Follower<P extends TailPage> implements TailPosition {
  readonly #backend: TailBackend<P>;
  readonly #stream: string;
  /** Aborted when the reader goes. */
  readonly #signal: AbortSignal | undefined;
  readonly stop: number;
  /** The cursor this tail yields next. */
  #next: number;
  /** Pages bounded in bytes as well as in records (`page-sizer.ts`). */
  readonly #pages: PageSizer;
  /** Records that land while the tail waits go straight to `options.deliver`. */
  readonly #listener: Listener | undefined;

  constructor(backend: TailBackend<P>, stream: string, options: TailOptions) {
    this.#backend = backend;
    this.#stream = stream;
    this.#signal = options.signal;
    this.stop = options.to ?? Number.POSITIVE_INFINITY;
    // Cursors start at 1: `from: 0` reads from the start (2.3).
    this.#next = Math.max(1, options.from);
    this.#pages = new PageSizer(backend.pageSize);
    this.#listener = handOver(options.deliver, this);
  }

  next(): number {
    return this.#next;
  }

  passed(cursor: number): void {
    this.#next = cursor + 1;
  }

  /**
   * The reader's signal and the store's close are read where they matter, not joined in
   * a signal of their own: every open tail would hold one. A tail waiting on the fan-out
   * wakes on the reader's signal, and on the store's close through its subscription,
   * which the close ends.
   */
  #stopped(): boolean {
    return this.#signal?.aborted === true || this.#backend.closed.aborted;
  }

  over(): boolean {
    return this.#next >= this.stop || this.#stopped();
  }

  /** Reads and yields every record from `next` up to `until` (exclusive); the last page. */
  async *#readUpTo(until: number): AsyncGenerator<StoredRecord, P | 'over'> {
    for (;;) {
      if (this.over()) return 'over';
      const to = Math.min(until, this.stop);
      const limit = this.#pages.limit;
      const page = await this.#backend.read(
        this.#stream,
        this.#next,
        Number.isFinite(to) ? to : undefined,
        limit,
      );
      let bytes = 0;
      for (const record of page.records) bytes += record.envelope.size;
      this.#pages.took(page.records.length, bytes);
      for (const record of page.records) {
        if (this.over()) return 'over';
        yield record;
        this.#next = record.envelope.cursor + 1;
      }
      if (this.over()) return 'over';
      // The archiving record is the last one: once it is delivered, nothing can follow.
      if (page.final !== null && this.#next > page.final) return 'over';
      if (page.records.length < limit || this.#next >= until) return page;
    }
  }

  /**
   * Catches up by reading, then joins the fan-out; the subscription, or 'over' when the
   * tail ended first. The last page read stays in this generator, which is done by then:
   * a tail that waits for records holds none of those it read.
   */
  async *#join(): AsyncGenerator<StoredRecord, Subscription | 'over'> {
    const caught = yield* this.#readUpTo(this.stop);
    if (caught === 'over') return 'over';
    const join = await this.#backend.joinPoint(this.#stream, caught);
    // The archiving record lies behind `from`: nothing will ever come.
    if (join.final !== null && this.#next > join.final) return 'over';
    return this.#backend.subscribe(this.#stream, Math.min(this.#next - 1, join.head));
  }

  async *records(): AsyncGenerator<StoredRecord, void, undefined> {
    const backend = this.#backend;
    let subscription: Subscription | undefined;
    try {
      for (;;) {
        const joined = yield* this.#join();
        if (joined === 'over') return;
        subscription = joined;
        // The fan-out stood past this tail: read what lies between.
        if (
          subscription.start >= this.#next &&
          (yield* this.#readUpTo(subscription.start + 1)) === 'over'
        ) {
          return;
        }
        // What the fan-out delivers, in this loop rather than a generator of its own: an
        // open tail waits here, and each generator layer is held by every waiting tail.
        for (;;) {
          if (this.over()) return;
          const entries = subscription.take();
          if (entries.length === 0) {
            if (subscription.dropped) break;
            if (subscription.ended) return;
            await subscription.wait(this.#signal, this.#listener);
            continue;
          }
          for (const { record, final } of entries) {
            const { cursor } = record.envelope;
            if (cursor < this.#next) {
              // Already yielded while catching up; the archiving record still ends the tail.
              if (final) return;
              continue;
            }
            if (cursor > this.#next && (yield* this.#readUpTo(cursor)) === 'over') return;
            if (this.over()) return;
            yield record;
            this.#next = cursor + 1;
            if (final || this.over()) return;
          }
        }
        // Dropped: catch up by reading, then join again.
        backend.unsubscribe(subscription);
        subscription = undefined;
      }
    } catch (error) {
      // A read cut short by closing or aborting ends the tail instead of failing it.
      if (!this.#stopped()) throw error;
    } finally {
      if (subscription !== undefined) backend.unsubscribe(subscription);
    }
  }
}
