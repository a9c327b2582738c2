/**
 * The times at which open tails end, behind one timer (decisions row 68: a tail ends when
 * its token expires). Ten thousand open tails each with a timer of their own held ten
 * thousand timers, each with its closures and its place in Node's timer lists, for as
 * long as they were open (`npm run bench`, memory part); here a tail holds one slot of a
 * binary heap, and the one timer is armed for the earliest time in it.
 *
 * Times are read from the app's clock when the timer fires, so a clock a test sets ahead
 * ends the tails it passes at the next firing, as a timer per tail did.
 */
import type { Clock } from '../../clock.ts';

/** setTimeout's largest delay; a later time is waited for again when this one fires. */
const MAX_DELAY_MS = 2_147_483_647;

/** An entry of the queue: when it is due, and where the queue holds it (-1: not held). */
export interface Due {
  readonly at: number;
  slot: number;
}

/** A queue of entries, each handed to `fire` once the clock reaches its `at`. */
export class Deadlines<T extends Due> {
  readonly #clock: Clock;
  readonly #fire: (entry: T) => void;
  /** A binary min-heap by `at`: each entry's `slot` is its index here. */
  #heap: T[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(clock: Clock, fire: (entry: T) => void) {
    this.#clock = clock;
    this.#fire = fire;
  }

  /** The entries held, in no particular order. */
  get entries(): readonly T[] {
    return this.#heap;
  }

  get size(): number {
    return this.#heap.length;
  }

  /** Holds `entry` until it is due or removed. */
  add(entry: T): void {
    entry.slot = this.#heap.length;
    this.#heap.push(entry);
    this.#up(entry.slot);
    if (entry.slot === 0) this.#arm();
  }

  /** Lets go of `entry`; true when it was held. */
  remove(entry: T): boolean {
    const slot = entry.slot;
    if (!this.#take(entry)) return false;
    if (slot === 0) this.#arm();
    return true;
  }

  /** Lets go of every entry and stops the timer. */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const entry of this.#heap) entry.slot = -1;
    this.#heap = [];
  }

  readonly #due = (): void => {
    this.#timer = undefined;
    const now = this.#clock.now();
    for (let head = this.#heap[0]; head !== undefined && head.at <= now; head = this.#heap[0]) {
      this.#take(head);
      this.#fire(head);
    }
    this.#arm();
  };

  /** Takes `entry` out of the heap, without arming the timer. */
  #take(entry: T): boolean {
    const slot = entry.slot;
    if (slot < 0 || this.#heap[slot] !== entry) return false;
    entry.slot = -1;
    const last = this.#heap.pop();
    if (last !== undefined && last !== entry) {
      this.#heap[slot] = last;
      last.slot = slot;
      this.#down(this.#up(slot));
    }
    return true;
  }

  #arm(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const head = this.#heap[0];
    if (head === undefined) return;
    const left = Math.max(0, head.at - this.#clock.now());
    this.#timer = setTimeout(this.#due, Math.min(left, MAX_DELAY_MS)).unref();
  }

  /** Moves the entry at `slot` up to its place; answers where it came to rest. */
  #up(slot: number): number {
    const heap = this.#heap;
    const entry = heap[slot];
    if (entry === undefined) return slot;
    let at = slot;
    while (at > 0) {
      const parentSlot = (at - 1) >> 1;
      const parent = heap[parentSlot];
      if (parent === undefined || parent.at <= entry.at) break;
      heap[at] = parent;
      parent.slot = at;
      at = parentSlot;
    }
    heap[at] = entry;
    entry.slot = at;
    return at;
  }

  /** Moves the entry at `slot` down to its place. */
  #down(slot: number): void {
    const heap = this.#heap;
    const entry = heap[slot];
    if (entry === undefined) return;
    let at = slot;
    for (;;) {
      const left = 2 * at + 1;
      const right = left + 1;
      let child = left;
      const rightEntry = heap[right];
      const leftEntry = heap[left];
      if (leftEntry === undefined) break;
      if (rightEntry !== undefined && rightEntry.at < leftEntry.at) child = right;
      const smaller = heap[child];
      if (smaller === undefined || smaller.at >= entry.at) break;
      heap[at] = smaller;
      smaller.slot = at;
      at = child;
    }
    heap[at] = entry;
    entry.slot = at;
  }
}
