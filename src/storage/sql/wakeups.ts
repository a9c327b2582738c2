/**
 * Wake-ups for tails: "something may have landed on stream S", within one store instance.
 *
 * The listeners are the stream feeds of `stream-fanout.ts`, one per stream with live tails,
 * never the tails themselves: a wake costs one read of the stream however many tails
 * follow it. Wakes come from another store instance or process (a
 * PostgreSQL notification, `signals.ts`; a SQLite commit, `sqlite-watch.ts`); appends made
 * through this instance hand their records to the fan-out directly and wake nobody.
 *
 * A wake may carry the stream's head as of the commit that caused it, so a feed that
 * already delivered that far skips the read, and the records that commit landed, so a
 * feed that stands right before them takes them without reading. Only streams with a
 * listener are kept here.
 */
import type { StoredRecord } from '../log-store.ts';

/**
 * Hears one stream's wakes; `head` is the landed head when the signal told it, `records`
 * what the commit landed on the stream, in cursor order, when the signal carried them.
 */
export type WakeListener = (
  head: number | undefined,
  records: readonly StoredRecord[] | undefined,
) => void;

export class Wakeups {
  readonly #streams = new Map<string, Set<WakeListener>>();

  /** Calls `listener` on every wake of `stream` until the answered function is called. */
  listen(stream: string, listener: WakeListener): () => void {
    let listeners = this.#streams.get(stream);
    if (listeners === undefined) {
      listeners = new Set();
      this.#streams.set(stream, listeners);
    }
    listeners.add(listener);
    return () => {
      const set = this.#streams.get(stream);
      set?.delete(listener);
      if (set?.size === 0) this.#streams.delete(stream);
    };
  }

  /** Something landed on `stream`, up to `head` when known: `records` when told. */
  wake(stream: string, head?: number, records?: readonly StoredRecord[]): void {
    for (const listener of this.#streams.get(stream) ?? []) listener(head, records);
  }

  /** Anything may have landed anywhere (a lost notification channel came back). */
  wakeAll(): void {
    for (const stream of [...this.#streams.keys()]) this.wake(stream);
  }

  /** The streams followed now, for a watcher that asks their heads (`sqlite-watch.ts`). */
  followed(): string[] {
    return [...this.#streams.keys()];
  }

  /** Whether no stream is followed, so watchers can sleep. */
  get idle(): boolean {
    return this.#streams.size === 0;
  }
}
