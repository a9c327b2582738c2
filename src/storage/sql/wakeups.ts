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
 * Hears one stream's wakes. An object rather than a function, so that a stream's feed
 * hears them itself, with no closure of its own for each followed stream.
 */
export interface WakeListener {
  /**
   * `head` is the landed head when the signal told it, `records` what the commit landed
   * on the stream, in cursor order, when the signal carried them.
   */
  woken(head: number | undefined, records: readonly StoredRecord[] | undefined): void;
}

export class Wakeups {
  /**
   * The listeners of each followed stream: the one listener itself while there is one,
   * as there is for a stream's one feed, else a set of them. A stream with a live tail is
   * followed for as long as the tail is open, and a set for its one listener would be
   * held for each.
   */
  readonly #streams = new Map<string, WakeListener | Set<WakeListener>>();

  /** Calls `listener` on every wake of `stream` until `unlisten` is called with it. */
  listen(stream: string, listener: WakeListener): void {
    const held = this.#streams.get(stream);
    if (held === undefined) this.#streams.set(stream, listener);
    else if (held instanceof Set) held.add(listener);
    else this.#streams.set(stream, new Set([held, listener]));
  }

  /** Stops calling `listener` on the wakes of `stream`. */
  unlisten(stream: string, listener: WakeListener): void {
    const held = this.#streams.get(stream);
    if (held === listener) {
      this.#streams.delete(stream);
    } else if (held instanceof Set) {
      held.delete(listener);
      if (held.size === 0) this.#streams.delete(stream);
    }
  }

  /** Something landed on `stream`, up to `head` when known: `records` when told. */
  wake(stream: string, head?: number, records?: readonly StoredRecord[]): void {
    const held = this.#streams.get(stream);
    if (held instanceof Set) for (const listener of held) listener.woken(head, records);
    else held?.woken(head, records);
  }

  /** Anything may have landed anywhere (a lost notification channel came back). */
  wakeAll(): void {
    for (const stream of [...this.#streams.keys()]) this.wake(stream);
  }

  /** Whether anything here listens to `stream`'s wakes. */
  follows(stream: string): boolean {
    return this.#streams.has(stream);
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
