/**
 * How many drivers of a process start at once (`DriverRunner.drive`). A start costs a few
 * store round trips in a row (the lease, the session's row and option, its saved state,
 * its log), and the work store's connections are the ones every append's due mark is
 * written on: a thousand sessions woken together (a restart, a burst of messages to idle
 * sessions) would queue thousands of start statements in front of every mark, so a
 * conversation already under way would wait for every other session's start. Starts
 * past the bound wait here instead, in the order they came, and a started driver's
 * turns go on meanwhile.
 */
export class StartGate {
  readonly #limit: number;
  #running = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Resolves once this start may go; `leave` must follow, once. */
  enter(): Promise<void> {
    if (this.#running < this.#limit) {
      this.#running += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Ends a start: the next waiting one goes. */
  leave(): void {
    const next = this.#waiting.shift();
    if (next === undefined) this.#running -= 1;
    else next();
  }
}
