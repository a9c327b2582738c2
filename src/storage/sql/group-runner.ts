/**
 * Group commit across streams: appends that arrive while earlier ones
 * are being written wait, and then go together in one call of `run`, whatever sessions
 * they are on. On PostgreSQL that call is one statement (`append-postgres.ts`), on SQLite
 * one transaction: one commit and one flush for many appends instead of one each. A group
 * starts at the end of the event-loop turn, so what is submitted in one turn goes
 * together.
 *
 * Up to `concurrency` groups run at once (PostgreSQL has a pool; SQLite's one connection
 * takes 1). A key (a stream) is in at most one running group: later items of a busy key
 * wait for the next group, so one process never queues behind its own row lock, and a
 * stream's items are written in the order they were submitted.
 *
 * `run` answers one outcome per item, in order, so one item's refusal does not fail the
 * others. If it throws with an error `isolates` accepts (one that proves nothing was
 * written, such as a bad value in one batch), each item of the group is run again alone,
 * in order, so the error reaches only the item that caused it; any other error fails the
 * whole group.
 */

/** What `run` answers for one item. */
export type ItemOutcome<R> =
  { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown };

export interface GroupRunnerOptions<T, R> {
  /** Writes a group; one outcome per item, in order. */
  readonly run: (items: readonly T[]) => Promise<readonly ItemOutcome<R>[]>;
  /** The key an item is serialised on. */
  readonly keyOf: (item: T) => string;
  /** Groups that may run at once. */
  readonly concurrency: number;
  /** The most an item of a group may weigh in total (records); a heavier item goes alone. */
  readonly maxWeight: number;
  readonly weightOf: (item: T) => number;
  /** Whether a group's failure left nothing written and may be retried item by item. */
  readonly isolates: (error: unknown) => boolean;
}

interface Waiting<T, R> {
  readonly item: T;
  readonly key: string;
  readonly resolve: (value: R) => void;
  readonly reject: (error: unknown) => void;
}

export class GroupRunner<T, R> {
  readonly #options: GroupRunnerOptions<T, R>;
  #waiting: Waiting<T, R>[] = [];
  /** Keys with an item in a running group. */
  readonly #busy = new Set<string>();
  #running = 0;
  #scheduled = false;

  constructor(options: GroupRunnerOptions<T, R>) {
    this.#options = options;
  }

  /** Runs `item` in the next group it fits in; settles with its outcome. */
  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#waiting.push({ item, key: this.#options.keyOf(item), resolve, reject });
      this.#schedule();
    });
  }

  /**
   * Starts groups once this turn of the event loop is over, so everything submitted in
   * it goes together: the writers a finished group answers submit their next items in
   * the microtasks that follow, and they join the next group instead of one starting
   * with the first of them alone.
   */
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#start();
    });
  }

  /** Starts groups while a slot is free and some waiting item's key is not busy. */
  #start(): void {
    while (this.#running < this.#options.concurrency) {
      const group = this.#take();
      if (group.length === 0) return;
      this.#running += 1;
      void this.#runGroup(group).finally(() => {
        this.#running -= 1;
        for (const waiting of group) this.#busy.delete(waiting.key);
        this.#schedule();
      });
    }
  }

  /** The waiting items of free keys, in arrival order, up to the weight bound. */
  #take(): Waiting<T, R>[] {
    const { maxWeight, weightOf } = this.#options;
    const group: Waiting<T, R>[] = [];
    const left: Waiting<T, R>[] = [];
    const taken = new Set<string>();
    // A key with an item left behind keeps its later items behind too: its order holds.
    const blocked = new Set<string>();
    let weight = 0;
    for (const waiting of this.#waiting) {
      const heavier = weight + weightOf(waiting.item);
      const free =
        !blocked.has(waiting.key) && (taken.has(waiting.key) || !this.#busy.has(waiting.key));
      if (free && (group.length === 0 || heavier <= maxWeight)) {
        group.push(waiting);
        taken.add(waiting.key);
        weight = heavier;
      } else {
        blocked.add(waiting.key);
        left.push(waiting);
      }
    }
    for (const key of taken) this.#busy.add(key);
    this.#waiting = left;
    return group;
  }

  async #runGroup(group: readonly Waiting<T, R>[]): Promise<void> {
    const items = group.map((waiting) => waiting.item);
    let outcomes: readonly ItemOutcome<R>[];
    try {
      outcomes = await this.#options.run(items);
    } catch (error) {
      if (group.length === 1 || !this.#options.isolates(error)) {
        for (const waiting of group) waiting.reject(error);
        return;
      }
      const alone: ItemOutcome<R>[] = [];
      for (const item of items) {
        const [outcome] = await this.#options
          .run([item])
          .catch((error: unknown) => [{ ok: false, error } as const]);
        alone.push(outcome ?? { ok: false, error: new Error('the item answered no outcome') });
      }
      outcomes = alone;
    }
    group.forEach((waiting, index) => {
      const outcome = outcomes[index];
      if (outcome === undefined) waiting.reject(new Error('the group answered no outcome'));
      else if (outcome.ok) waiting.resolve(outcome.value);
      else waiting.reject(outcome.error);
    });
  }
}
