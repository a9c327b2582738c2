/**
 * One tail's place in the fan-out of a stream, on every backend (the SQL stores'
 * `sql/stream-fanout.ts`, Redis's `redis/wake-reader.ts`): a bounded buffer the
 * process's one reader of the stream fills and the tail drains.
 *
 * The bound keeps a slow tail from growing memory: it counts records (`capacity`) and the
 * bytes of their bodies (`capacityBytes`, 1 MiB by default), since a tail that stops
 * reading keeps alive every record it buffers, which a thousand records of 256 KiB
 * would make a quarter GiB per tail. Once a push would overflow either,
 * the reader drops the subscription, and the tail goes back to reading the log itself from
 * where it stands before it joins again. Nothing is lost that way, because every record
 * stays in the log; the buffer only saves reads.
 */
import type { StoredRecord } from './log-store.ts';

/** A record as the fan-out hands it on: `final` marks the record that archived the stream. */
export interface FedRecord {
  readonly record: StoredRecord;
  readonly final: boolean;
}

/**
 * Takes a record pushed while its tail waits (`park`), or answers false to leave
 * it buffered. An object rather than a function: the tail itself is its listener.
 */
export interface Listener {
  offered(entry: FedRecord): boolean;
}

/** Hears, once, that a parked tail has something to do (`Subscription.park`). */
export interface Waker {
  woken(): void;
}

/** Where a tail stands, for `offerTo`. */
export interface TailPosition {
  /** The cursor the tail yields next. */
  readonly expected: () => number;
  /** The cursor the tail stops before (`to`), or Infinity. */
  readonly stop: number;
  /** True once the tail is to end (past `to`, aborted, its store closed). */
  readonly over: () => boolean;
  /** Moves the tail on past `cursor`, which `deliver` took. */
  readonly passed: (cursor: number) => void;
}

/**
 * A waiting tail's answer for `entry` (`Listener.offered`): hands its next record in order
 * to `deliver` (`TailOptions.deliver`), past the tail's iterator. A record that ends the
 * tail (the archiving record, the one before `to`), one out of order, and any `deliver`
 * leaves, stay buffered for the iterator.
 */
export function offerTo(
  deliver: (record: StoredRecord) => boolean,
  tail: TailPosition,
  { record, final }: FedRecord,
): boolean {
  const { cursor } = record.envelope;
  if (final || cursor !== tail.expected() || cursor + 1 >= tail.stop || tail.over()) return false;
  if (!deliver(record)) return false;
  tail.passed(cursor);
  return true;
}

/** Bytes of bodies one subscription buffers at most, by default. */
export const SUBSCRIPTION_BYTES = 1024 * 1024;

export class Subscription {
  /** The stream this subscription follows. */
  readonly stream: string;
  /** Every record with a cursor above this one is pushed, in cursor order, without gap. */
  readonly start: number;
  readonly #capacity: number;
  readonly #capacityBytes: number;
  #entries: FedRecord[] = [];
  /** Bytes of the bodies in `#entries`. */
  #bytes = 0;
  #dropped = false;
  #ended = false;
  /** The parked tail, and its listener while it waits. */
  #waker: Waker | undefined;
  #listener: Listener | undefined;

  constructor(stream: string, start: number, capacity: number, capacityBytes = SUBSCRIPTION_BYTES) {
    this.stream = stream;
    this.start = start;
    this.#capacity = capacity;
    this.#capacityBytes = capacityBytes;
  }

  /** True once the feed let go of this subscription: the tail reads the log itself. */
  get dropped(): boolean {
    return this.#dropped;
  }

  /** True once the subscription was ended (the store closed). */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * Hands the next records to a waiting tail's listener (`park`) or buffers them; answers
   * false when they do not fit, after which the buffer is emptied and the subscription
   * counts as dropped.
   */
  push(entries: readonly FedRecord[]): boolean {
    if (this.#ended || this.#dropped) return false;
    let taken = 0;
    // A listener sees records only while nothing waits in the buffer, so order holds.
    if (this.#listener !== undefined && this.#entries.length === 0) {
      for (const entry of entries) {
        if (!this.#offer(this.#listener, entry)) break;
        taken += 1;
      }
      if (taken === entries.length) return true;
    }
    return this.#buffer(taken === 0 ? entries : entries.slice(taken));
  }

  /**
   * The listener's answer for one record. A listener that throws leaves the record to
   * the tail's iterator, which meets the same failure on its own path: the reader that
   * pushes serves every tail of the stream and must not fail for one.
   */
  #offer(listener: Listener, entry: FedRecord): boolean {
    try {
      return listener.offered(entry);
    } catch {
      this.#listener = undefined;
      return false;
    }
  }

  #buffer(entries: readonly FedRecord[]): boolean {
    let bytes = this.#bytes;
    for (const entry of entries) bytes += entry.record.envelope.size;
    if (this.#entries.length + entries.length > this.#capacity || bytes > this.#capacityBytes) {
      this.drop();
      return false;
    }
    this.#bytes = bytes;
    for (const entry of entries) this.#entries.push(entry);
    this.#notify();
    return true;
  }

  /** Lets go of the subscription: the tail catches up by reading and joins again. */
  drop(): void {
    this.#dropped = true;
    this.#entries = [];
    this.#bytes = 0;
    this.#notify();
  }

  /** Ends the subscription: a waiting tail wakes up and returns. */
  end(): void {
    this.#ended = true;
    this.#notify();
  }

  /** Takes every buffered record. */
  take(): FedRecord[] {
    const entries = this.#entries;
    this.#entries = [];
    this.#bytes = 0;
    return entries;
  }

  /** True when a tail has something to do without waiting: records, a drop or the end. */
  #ready(): boolean {
    return this.#entries.length > 0 || this.#dropped || this.#ended;
  }

  /**
   * Parks a tail that waits: `waker.woken()` is called once, when a record is buffered or
   * the subscription is dropped or ended. Meanwhile, and only while the buffer is empty,
   * pushed records go to `listener` first (`Listener`): the first one it answers false
   * for, and every one after it, is buffered and wakes the tail. A parked tail holds no
   * promise or closure of its own. Answers false, parking nothing, when the tail has
   * something to do already.
   */
  park(waker: Waker, listener?: Listener): boolean {
    if (this.#ready()) return false;
    this.#waker = waker;
    this.#listener = listener;
    return true;
  }

  /** Takes `waker` off, if it is still the parked one (its tail stopped waiting). */
  unpark(waker: Waker): void {
    if (this.#waker !== waker) return;
    this.#waker = undefined;
    this.#listener = undefined;
  }

  #notify(): void {
    const waker = this.#waker;
    if (waker === undefined) return;
    this.#waker = undefined;
    this.#listener = undefined;
    waker.woken();
  }
}
