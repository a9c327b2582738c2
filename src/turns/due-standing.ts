/**
 * What a driver knows of its session's due entry, so that a driving record appended
 * through this process while the driver works or lingers can land without a due mark of
 * its own (`TurnRuntime.admit`).
 *
 * The mark is what keeps an acknowledged record safe from a crash: it leaves the entry
 * due, and the sweep (here after a restart, or on another process once the lease lapses)
 * drives every due entry. While this process holds the session's lease, only its driver
 * moves the entry, by settling it. So once the entry is known due, it stays due until the
 * driver's next settle. It is known due when a mark written here finished while the
 * driver was not settling and had not settled since the mark began.
 *
 * A hold, taken while the entry is known due, keeps the driver from beginning a settle
 * until the record it was taken for has landed (or failed to). The settle that follows
 * reads the log after the record landed and finds the turn it calls for, so the record
 * needs no mark: the entry it relies on stands until that turn is done.
 */
export class DueStanding {
  #due = false;
  #settling = false;
  #settles = 0;
  #holds = 0;
  readonly #onReleased: () => void;

  /** `onReleased`: the last hold was released (the driver may settle now). */
  constructor(onReleased: () => void) {
    this.#onReleased = onReleased;
  }

  /** Settles so far: what a mark notes as it begins, for `marked`. */
  get settles(): number {
    return this.#settles;
  }

  /** Whether a hold is out: the driver must not begin a settle. */
  get held(): boolean {
    return this.#holds > 0;
  }

  /** A mark written here finished; `before` is `settles` as it began. */
  marked(before: number): void {
    if (!this.#settling && this.#settles === before) this.#due = true;
  }

  /**
   * A hold on the entry as it stands, released by calling the answer (once is enough;
   * more are ignored); null when the entry is not known due or a settle is under way.
   */
  hold(): (() => void) | null {
    if (!this.#due || this.#settling) return null;
    this.#holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#holds -= 1;
      if (this.#holds === 0) this.#onReleased();
    };
  }

  /** A settle begins: no hold is given until it ends. Only while none is out. */
  beginSettle(): void {
    if (this.#holds > 0) throw new Error('a settle began while a hold was out');
    this.#settling = true;
  }

  /** The settle ended; `moved`: it moved the entry, which is no longer known due. */
  endSettle(moved: boolean): void {
    this.#settling = false;
    if (!moved) return;
    this.#settles += 1;
    this.#due = false;
  }
}

/**
 * A driving record's admission (`TurnRuntime.admit`): released once the record landed
 * or failed to. `lapsed`: the lease it was given under may have lapsed since, so the
 * record, once landed, is marked after all (another process may have taken the session up
 * and settled it without seeing the record).
 */
export interface Admission {
  release(): void;
  lapsed(): boolean;
}

/** The admission of a record whose session was marked due for it. */
export const MARKED: Admission = { release: () => undefined, lapsed: () => false };
