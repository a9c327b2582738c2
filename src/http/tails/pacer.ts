/**
 * Write pacing for tails: a connection's writes are corked and written together, at most
 * once per `windowMs`, and at once when the connection has been quiet that long.
 *
 * Every write to a loopback or LAN socket is a system call that also runs the receiver's
 * side of TCP, and on the far end a read: for a session with a thousand tails, a record
 * is a thousand of each (`npm run bench`). A tail that receives records faster than one
 * per window gets them a few at a time instead: at most `windowMs` later than unpaced,
 * in the same order, the same bytes, each WebSocket message still its own frame. A tail
 * that receives less than one record per window is written to as soon as the code that
 * wrote its line has run (a microtask), with no delay at all. Not at the end of the
 * tick, as Node's HTTP responses are: a record reaches its tails within the store's
 * answer to its append, and the rest of that tick is the append's own work (its answer,
 * and for a message the turn runtime's statements, about a millisecond on a 2-core
 * virtual machine), which the line used to wait for (`docs/benchmarks.md`).
 *
 * One `Pacer` serves every tail of an app (No per-tail timers): the
 * connections due now are written by one microtask once the code that wrote to them has
 * run (a record handed to a thousand tails is written to them together), and those
 * held for their window wait in one queue behind one timer. A record that reaches a
 * thousand tails of a session thus costs one callback, not a thousand.
 */
import { performance } from 'node:perf_hooks';
import type { Socket } from 'node:net';

/** The longest a written line waits for its connection's next write (ms). */
export const TAIL_WINDOW_MS = 2;

/** What pacing needs of a connection. */
export type PacedWire = Pick<Socket, 'cork' | 'uncork'>;

/**
 * One paced connection, as `Pacer.wire` answers it: `hold()` before each write. An object
 * with a method, not a closure: every open tail holds one.
 */
export class Paced {
  readonly wire: PacedWire;
  readonly #pacer: Pacer;
  corked = false;
  /** When its last batch was written. */
  flushed = Number.NEGATIVE_INFINITY;

  constructor(pacer: Pacer, wire: PacedWire) {
    this.#pacer = pacer;
    this.wire = wire;
  }

  /** See `Pacer.wire`. */
  hold(): void {
    if (this.corked) return;
    this.corked = true;
    this.wire.cork();
    this.#pacer.corked(this);
  }
}

/** Pacing that does nothing: `Pacer.wire` without a wire, or a writer without a pacer. */
export const UNPACED = { hold: (): void => undefined };

/** Held connections and when each is due, in the order they are due. */
interface Held {
  readonly paced: Paced;
  readonly due: number;
}

/** Paces the writes of many connections with one microtask at a time and one timer. */
export class Pacer {
  readonly #windowMs: number;
  readonly #now: () => number;
  /** Connections to write once the code that wrote to them has run. */
  #soon: Paced[] = [];
  /** Connections held for their window; `due` grows along the array. */
  #later: Held[] = [];
  #timer: NodeJS.Timeout | undefined;

  /** `now` is the clock in ms (monotonic; tests drive it by hand). */
  constructor(windowMs = TAIL_WINDOW_MS, now: () => number = () => performance.now()) {
    this.#windowMs = windowMs;
    this.#now = now;
  }

  /**
   * Paces `wire`: its `hold()` is to be called before each write to it. The first write
   * of a batch corks the connection and has it written once the code that wrote to it
   * has run (a microtask) when its last batch is `windowMs` old, else when it will be.
   * Without a wire, `hold` does nothing.
   */
  wire(wire: PacedWire | undefined): Pick<Paced, 'hold'> {
    return wire === undefined ? UNPACED : new Paced(this, wire);
  }

  /** `paced` was just corked for a write (`Paced.hold`): it is written when due. */
  corked(paced: Paced): void {
    const due = paced.flushed + this.#windowMs;
    if (due <= this.#now()) {
      if (this.#soon.push(paced) === 1) queueMicrotask(this.#writeSoon);
      return;
    }
    // Every connection waits the same window, so the queue stays in order of `due`.
    if (this.#later.push({ paced, due }) === 1) this.#arm();
  }

  #write(paced: Paced, now: number): void {
    paced.corked = false;
    paced.flushed = now;
    paced.wire.uncork();
  }

  readonly #writeSoon = (): void => {
    const soon = this.#soon;
    this.#soon = [];
    const now = this.#now();
    for (const paced of soon) this.#write(paced, now);
  };

  #arm(): void {
    const head = this.#later[0];
    if (head === undefined) return;
    this.#timer = setTimeout(this.#writeLater, Math.max(0, head.due - this.#now()));
  }

  readonly #writeLater = (): void => {
    this.#timer = undefined;
    const now = this.#now();
    // The head is due: a timer may fire a fraction of a millisecond before `due`.
    let count = 1;
    while (count < this.#later.length && (this.#later[count]?.due ?? now) <= now) count += 1;
    const due = this.#later.splice(0, count);
    for (const { paced } of due) this.#write(paced, now);
    this.#arm();
  };

  /** Writes every held connection now and stops the timer (the app is closing). */
  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const held = this.#later;
    this.#later = [];
    const now = this.#now();
    for (const { paced } of held) this.#write(paced, now);
  }
}
