/**
 * The loop of one tail (`follow.ts` says what it does), as an iterator whose state lives
 * in fields: a tail that waits for the fan-out holds this object and its subscription,
 * not the suspended frames of generators and of the awaits under way in them
 * (`docs/benchmarks.md`, "Open tails"). How it is pulled, and parks while it waits, is
 * `parked-tail.ts`.
 */
import type { TailBackend, TailPage } from './tail-backend.ts';
import type { TailOptions } from './log-store.ts';
import { PageSizer } from './page-sizer.ts';
import { ParkedTail, type Step } from './parked-tail.ts';
import { DONE } from './pull.ts';
import type { FedRecord, Subscription } from './subscription.ts';
const NO_ENTRIES: readonly FedRecord[] = [];

/**
 * What the catch-up read under way leads to: joining the fan-out (the read went up to
 * `to`), taking what the fan-out delivers (the read filled what lay below its start), or
 * handing on the fan-out's entry the read filled the gap below.
 */
type Reading = 'join' | 'live' | 'gap';

/**
 * One tail's loop. It reads pages (`#reading`) up to a bound, then joins the fan-out or
 * goes on with what the fan-out delivers (`#entries`). The consumer pulls one record at a
 * time, so no call of `next` overlaps another; `return` ends the tail, a waiting `next`
 * included.
 */
export class Follower<P extends TailPage> extends ParkedTail {
  readonly #backend: TailBackend<P>;
  readonly #stream: string;
  readonly stop: number;
  /** The cursor this tail yields next. */
  #next: number;
  /** Pages bounded in bytes as well as in records (`page-sizer.ts`). */
  readonly #pages: PageSizer;
  /** The catch-up read under way and its bound (exclusive), or undefined once joined. */
  #reading: Reading | undefined = 'join';
  #until: number;
  /** The page being handed on, from `#pageAt`; `#asked`: the records its read asked for. */
  #page: P | undefined;
  #pageAt = 0;
  #asked = 0;
  /** The fan-out's subscription once joined, and what it delivered, from `#at`. */
  #subscription: Subscription | undefined;
  #entries: readonly FedRecord[] = NO_ENTRIES;
  #at = 0;
  /** The entry at `#at` is handed on as it is: the read below it filled the gap. */
  #filled = false;
  /** The record handed on last was the archiving record. */
  #last = false;
  #done = false;

  constructor(backend: TailBackend<P>, stream: string, options: TailOptions) {
    super(options);
    this.#backend = backend;
    this.#stream = stream;
    this.stop = options.to ?? Number.POSITIVE_INFINITY;
    this.#until = this.stop;
    // Cursors start at 1: `from: 0` reads from the start (2.3).
    this.#next = Math.max(1, options.from);
    this.#pages = new PageSizer(backend.pageSize);
  }

  expected(): number {
    return this.#next;
  }

  passed(cursor: number): void {
    this.#next = cursor + 1;
  }

  /**
   * The reader's signal and the store's close are read where they matter, not joined in
   * a signal of their own: every open tail would hold one. A tail waiting on the fan-out
   * wakes on the reader's signal (`ParkedTail`), and on the store's close through its
   * subscription, which the close ends.
   */
  #stopped(): boolean {
    return this.aborted() || this.#backend.closed.aborted;
  }

  over(): boolean {
    return this.#next >= this.stop || this.#stopped();
  }

  /** The next step, or undefined when the tail is to wait on its subscription. */
  protected async advance(): Promise<Step | undefined> {
    try {
      for (;;) {
        if (this.#done) return DONE;
        if (this.#last || this.over()) return this.finish();
        if (this.#reading !== undefined) {
          const step = await this.#read();
          if (step !== undefined) return step;
          continue;
        }
        const handed = this.#handOn();
        if (handed === 'read') continue;
        if (handed !== undefined) return handed;
        const subscription = this.#subscription;
        if (subscription === undefined) return this.finish();
        this.#entries = subscription.take();
        this.#at = 0;
        if (this.#entries.length > 0) continue;
        if (subscription.dropped) {
          // Dropped: catch up by reading, then join again.
          this.#subscription = undefined;
          this.#backend.unsubscribe(subscription);
          this.#startReading('join', this.stop);
          continue;
        }
        return subscription.ended ? this.finish() : undefined;
      }
    } catch (error) {
      this.finish();
      // A read cut short by closing or aborting ends the tail instead of failing it.
      if (this.#stopped()) return DONE;
      throw error;
    }
  }

  protected parking(): Subscription | undefined {
    return this.#subscription;
  }

  /** Ends the tail; a `next` waiting on the fan-out wakes and finds it done. */
  return(): Promise<Step> {
    const subscription = this.#subscription;
    this.finish();
    subscription?.end();
    return Promise.resolve(DONE);
  }

  protected finish(): Step {
    this.#done = true;
    this.#page = undefined;
    this.#entries = NO_ENTRIES;
    const subscription = this.#subscription;
    this.#subscription = undefined;
    if (subscription !== undefined) this.#backend.unsubscribe(subscription);
    return DONE;
  }

  #startReading(reading: Reading, until: number): void {
    this.#reading = reading;
    this.#until = until;
    this.#page = undefined;
  }

  /**
   * The next record of the catch-up read from `#next` up to `#until`, reading a page when
   * the last one is spent; undefined when a page was read or the read is done. The last
   * page is let go of once the read is done: a waiting tail holds none of what it read.
   */
  async #read(): Promise<Step | undefined> {
    const page = this.#page;
    if (page !== undefined) {
      const record = page.records[this.#pageAt];
      if (record !== undefined) {
        this.#pageAt += 1;
        this.#next = record.envelope.cursor + 1;
        return { done: false, value: record };
      }
      // The archiving record is the last one: once it is delivered, nothing can follow.
      if (page.final !== null && this.#next > page.final) return this.finish();
      if (page.records.length < this.#asked || this.#next >= this.#until) {
        return this.#readDone(page);
      }
    }
    const to = Math.min(this.#until, this.stop);
    const limit = this.#pages.limit;
    const read = await this.#backend.read(
      this.#stream,
      this.#next,
      Number.isFinite(to) ? to : undefined,
      limit,
    );
    if (this.#done) return DONE;
    let bytes = 0;
    for (const record of read.records) bytes += record.envelope.size;
    this.#pages.took(read.records.length, bytes);
    this.#page = read;
    this.#pageAt = 0;
    this.#asked = limit;
    return undefined;
  }

  /** The read ended with `last`: join the fan-out, or go on with what it delivers. */
  async #readDone(last: P): Promise<undefined> {
    const reading = this.#reading;
    this.#reading = undefined;
    this.#page = undefined;
    if (reading !== 'join') {
      this.#filled = reading === 'gap';
      return undefined;
    }
    const join = await this.#backend.joinPoint(this.#stream, last);
    if (this.#done) return undefined;
    // The archiving record lies behind `from`: nothing will ever come.
    if (join.final !== null && this.#next > join.final) {
      this.finish();
      return undefined;
    }
    const subscription = this.#backend.subscribe(this.#stream, Math.min(this.#next - 1, join.head));
    this.#subscription = subscription;
    // The fan-out stood past this tail: read what lies between.
    if (subscription.start >= this.#next) this.#startReading('live', subscription.start + 1);
    return undefined;
  }

  /**
   * The next record the fan-out delivered, in cursor order: repeats of what was read are
   * dropped, and a gap starts a read (the fan-out never makes one): 'read' then, and
   * undefined once the entries are spent.
   */
  #handOn(): Step | 'read' | undefined {
    const entries = this.#entries;
    for (let entry = entries[this.#at]; entry !== undefined; entry = entries[this.#at]) {
      const { record, final } = entry;
      const { cursor } = record.envelope;
      if (this.#filled) {
        this.#filled = false;
      } else if (cursor < this.#next) {
        // Already yielded while catching up; the archiving record still ends the tail.
        this.#at += 1;
        if (final) return this.finish();
        continue;
      } else if (cursor > this.#next) {
        this.#startReading('gap', cursor);
        return 'read';
      }
      if (this.over()) return this.finish();
      this.#at += 1;
      this.#next = cursor + 1;
      this.#last = final;
      return { done: false, value: record };
    }
    this.#entries = NO_ENTRIES;
    this.#at = 0;
    return undefined;
  }
}
