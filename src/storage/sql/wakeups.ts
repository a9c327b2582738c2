/**
 * Wake-ups for tails: "something may have landed on stream S", within one store instance.
 *
 * A tail subscribes once and loops: `clear()`, read from the store, and when it has
 * caught up `next()`. A wake that arrives between the clear and the wait is kept in the
 * subscription (`pending`), so a record landing while the tail reads is never missed,
 * and a tail that has nothing to do costs no query: it waits on a promise until an
 * append in this instance (or a signal from another process, see `postgres-signals.ts`
 * and `sqlite-signals.ts`) wakes it. Only streams with a subscriber are kept here.
 */

/** One tail's subscription to one stream. */
export interface Subscription {
  /** Forgets wakes seen so far; call before reading. */
  clear(): void;
  /** Resolves at the next wake since the last `clear`, at once if one came, or on abort. */
  next(signal: AbortSignal): Promise<void>;
  /** Stops listening; call when the tail ends. */
  end(): void;
}

interface Waiter {
  pending: boolean;
  resolve: (() => void) | undefined;
}

export class Wakeups {
  readonly #streams = new Map<string, Set<Waiter>>();

  /** Follows wakes of `stream` until `end()`. */
  subscribe(stream: string): Subscription {
    const waiter: Waiter = { pending: false, resolve: undefined };
    let waiters = this.#streams.get(stream);
    if (waiters === undefined) {
      waiters = new Set();
      this.#streams.set(stream, waiters);
    }
    waiters.add(waiter);
    return {
      clear: () => {
        waiter.pending = false;
      },
      next: (signal) => {
        if (waiter.pending || signal.aborted) return Promise.resolve();
        return new Promise<void>((resolve) => {
          const done = (): void => {
            signal.removeEventListener('abort', done);
            waiter.resolve = undefined;
            resolve();
          };
          waiter.resolve = done;
          signal.addEventListener('abort', done, { once: true });
        });
      },
      end: () => {
        waiter.resolve?.();
        const set = this.#streams.get(stream);
        set?.delete(waiter);
        if (set?.size === 0) this.#streams.delete(stream);
      },
    };
  }

  /** Something landed on `stream`. */
  wake(stream: string): void {
    for (const waiter of this.#streams.get(stream) ?? []) {
      waiter.pending = true;
      waiter.resolve?.();
    }
  }

  /** Anything may have landed anywhere (a lost notification channel came back). */
  wakeAll(): void {
    for (const stream of [...this.#streams.keys()]) this.wake(stream);
  }

  /** Whether any tail is waiting, so watchers can sleep when none is. */
  get idle(): boolean {
    return this.#streams.size === 0;
  }
}
