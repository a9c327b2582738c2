/** A service clock for tests that need time to pass faster than it does. */
import type { Clock } from '../../src/clock.ts';

/** Real time shifted by an offset the test only moves forward. */
export class ShiftedClock implements Clock {
  #offset = 0;
  now(): number {
    return Date.now() + this.#offset;
  }
  /** Moves the clock forward to `at`. */
  jumpTo(at: number): void {
    const offset = at - Date.now();
    if (offset < this.#offset) throw new Error('the clock only moves forward');
    this.#offset = offset;
  }
}
