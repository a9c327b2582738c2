/**
 * Group commit: work submitted for one key (a stream) while earlier work for that key is
 * running waits, and then runs as one group, with one call of `run`. On SQL that makes
 * the appends that queue behind a stream's row lock one transaction, one lock and one
 * commit (one fsync) instead of one each: with many writers on one stream the lock and
 * the flush were the whole cost of an append (`npm run bench:log`).
 *
 * `run` answers one outcome per item, in order, so one item's refusal does not fail the
 * others; if it throws, every item of the group fails with that error and, the group
 * being one transaction, nothing of it was written.
 */

/** What `run` answers for one item. */
export type ItemOutcome<R> =
  { readonly ok: true; readonly value: R } | { readonly ok: false; readonly error: unknown };

interface Waiting<T, R> {
  readonly item: T;
  readonly resolve: (value: R) => void;
  readonly reject: (error: unknown) => void;
}

export class GroupRunner<T, R> {
  readonly #run: (key: string, items: readonly T[]) => Promise<readonly ItemOutcome<R>[]>;
  /** Items waiting per key; a key is present while a group of it runs. */
  readonly #waiting = new Map<string, Waiting<T, R>[]>();

  constructor(run: (key: string, items: readonly T[]) => Promise<readonly ItemOutcome<R>[]>) {
    this.#run = run;
  }

  /** Runs `item` in the next group of `key`; settles with its outcome. */
  submit(key: string, item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const waiting = this.#waiting.get(key);
      if (waiting !== undefined) {
        waiting.push({ item, resolve, reject });
        return;
      }
      this.#waiting.set(key, [{ item, resolve, reject }]);
      void this.#drain(key);
    });
  }

  async #drain(key: string): Promise<void> {
    for (;;) {
      const group = this.#waiting.get(key) ?? [];
      if (group.length === 0) {
        this.#waiting.delete(key);
        return;
      }
      // Arrivals from now on wait for the next group.
      this.#waiting.set(key, []);
      let outcomes: readonly ItemOutcome<R>[];
      try {
        outcomes = await this.#run(
          key,
          group.map((waiting) => waiting.item),
        );
      } catch (error) {
        for (const waiting of group) waiting.reject(error);
        continue;
      }
      group.forEach((waiting, index) => {
        const outcome = outcomes[index];
        if (outcome === undefined) waiting.reject(new Error('the group answered no outcome'));
        else if (outcome.ok) waiting.resolve(outcome.value);
        else waiting.reject(outcome.error);
      });
    }
  }
}
