/**
 * `node:sqlite` runs every statement synchronously, and a burst of queued statements
 * (a sweep that starts a hundred drivers, each a few statements) settles one promise after
 * another without the event loop getting a turn: requests and tails wait behind all of
 * it. `LoopTurns` lets the process's SQLite work run for at most `SLICE_MS` at a stretch:
 * a call that would begin later than that after the loop's last turn waits for the next
 * one (`setImmediate`, after the loop's pending I/O) instead.
 */
import { performance } from 'node:perf_hooks';

/** How long SQLite work may hold the event loop before it gives the loop a turn, ms. */
export const SLICE_MS = 2;

export class LoopTurns {
  /** When the work since the loop's last turn began; undefined once the loop has had one. */
  #since: number | undefined;
  readonly #turned = (): void => {
    this.#since = undefined;
  };

  /** Undefined when work may go on now; else the loop's next turn, after which it may. */
  wait(): Promise<void> | undefined {
    if (this.#since === undefined) {
      this.#begin();
      return undefined;
    }
    if (performance.now() - this.#since <= SLICE_MS) return undefined;
    // `#turned`, set before this, runs first: the wait ends in the next slice.
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      this.#begin();
    });
  }

  #begin(): void {
    this.#since = performance.now();
    setImmediate(this.#turned);
  }
}

/** The process's: its SQLite connections share one event loop. */
export const loopTurns = new LoopTurns();
