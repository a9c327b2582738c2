/**
 * A mailbox per key: tasks given for one key run one at a time, in the order given;
 * tasks for different keys run concurrently. The actor host delivers every command to an
 * actor through its id's mailbox, so an actor never sees two commands at once.
 */
export class Mailboxes {
  /** The tail of each non-empty mailbox: settles when its last task has. */
  readonly #tails = new Map<string, Promise<void>>();
  /** Tasks queued or running per key. */
  readonly #depth = new Map<string, number>();

  /** Runs `task` after every task given earlier for `key`; answers what it answers. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    this.#depth.set(key, (this.#depth.get(key) ?? 0) + 1);
    // A failed task answers its own caller; the next task runs regardless. The count
    // drops before the caller resumes, so `busy` is exact as soon as it has its answer.
    const result = previous.then(task).finally(() => {
      const depth = (this.#depth.get(key) ?? 1) - 1;
      if (depth > 0) {
        this.#depth.set(key, depth);
      } else {
        this.#depth.delete(key);
        this.#tails.delete(key);
      }
    });
    this.#tails.set(
      key,
      result.then(
        () => undefined,
        () => undefined,
      ),
    );
    return result;
  }

  /** True while a task for `key` is queued or running. */
  busy(key: string): boolean {
    return this.#depth.has(key);
  }

  /** Settles once every task given so far, for every key, has settled. */
  async drained(): Promise<void> {
    while (this.#tails.size > 0) {
      await Promise.all(this.#tails.values());
    }
  }
}
