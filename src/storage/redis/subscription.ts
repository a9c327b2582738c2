/**
 * One tail's place in the fan-out of a stream: a bounded buffer the shared reader fills
 * and the tail drains.
 *
 * The bound keeps a slow tail from growing memory: once its buffer is full the reader
 * drops it (`overflowed`), and the tail goes back to reading the log with XRANGE from
 * where it stands before it joins again. Nothing is lost that way, because every record
 * stays in the stream; the buffer only saves reads.
 */
import type { LogEntry } from './entries.ts';

export class Subscription {
  /** The stream this subscription follows. */
  readonly stream: string;
  /** Every entry with a cursor above this one is pushed, in cursor order, without gap. */
  readonly start: number;
  readonly #capacity: number;
  #entries: LogEntry[] = [];
  #overflowed = false;
  #ended = false;
  #wake: (() => void) | undefined;

  constructor(stream: string, start: number, capacity: number) {
    this.stream = stream;
    this.start = start;
    this.#capacity = capacity;
  }

  /** True once the buffer overflowed: the reader pushes nothing more. */
  get overflowed(): boolean {
    return this.#overflowed;
  }

  /** True once the subscription was ended (abort, store closed). */
  get ended(): boolean {
    return this.#ended;
  }

  /**
   * Buffers an entry; answers false when the buffer is full, after which the buffer is
   * emptied and the subscription counts as overflowed.
   */
  push(entry: LogEntry): boolean {
    if (this.#ended || this.#overflowed) return false;
    if (this.#entries.length >= this.#capacity) {
      this.#overflowed = true;
      this.#entries = [];
      this.#notify();
      return false;
    }
    this.#entries.push(entry);
    this.#notify();
    return true;
  }

  /** Ends the subscription: a waiting tail wakes up and returns. */
  end(): void {
    this.#ended = true;
    this.#notify();
  }

  /** Takes every buffered entry. */
  take(): LogEntry[] {
    const entries = this.#entries;
    this.#entries = [];
    return entries;
  }

  /** Resolves once an entry is buffered, or the subscription overflowed or ended. */
  wait(): Promise<void> {
    if (this.#entries.length > 0 || this.#overflowed || this.#ended) return Promise.resolve();
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
