/**
 * The Redis reader's backstop (`wake-reader.ts`): every followed stream is read once a
 * round, whatever the wakes said, which bounds the wait for a lost wake (a slot
 * migrating, a link gone silent, a process of an older version).
 *
 * A round is spread over slices, one every `ROUND_MS / SLICES`: reading every stream at
 * once put a burst of as many reads as streams followed (a thousand sessions' tails, a
 * thousand XRANGEs and their replies) into one turn of the loop every round. A round's
 * slices are sized when it starts, so streams that stop being followed during it do not
 * slow the rest of it down; streams followed during it are read in it too (a `Map`
 * iterator visits what is added after it).
 */

/** Every followed stream is read this often. */
const ROUND_MS = 5_000;
/** Slices per round. */
const SLICES = 50;

/** Reads each of `followed`'s values once a round while started. */
export class Backstop {
  readonly #followed: ReadonlyMap<unknown, { read(): void }>;
  #timer: NodeJS.Timeout | undefined;
  #round: Iterator<{ read(): void }> | undefined;
  #slice = 0;

  constructor(followed: ReadonlyMap<unknown, { read(): void }>) {
    this.#followed = followed;
  }

  /** Starts the rounds, unless they run already. */
  start(): void {
    this.#timer ??= setInterval(this.#next, ROUND_MS / SLICES).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  readonly #next = (): void => {
    if (this.#round === undefined) {
      this.#round = this.#followed.values();
      this.#slice = Math.ceil(this.#followed.size / SLICES);
    }
    for (let left = this.#slice; left > 0; left--) {
      const next = this.#round.next();
      if (next.done === true) {
        this.#round = undefined;
        return;
      }
      next.value.read();
    }
  };
}
