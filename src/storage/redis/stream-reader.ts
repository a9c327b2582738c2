/**
 * The one blocking reader of a store instance: a dedicated connection runs
 * `XREAD BLOCK … STREAMS <every tailed stream>` in a loop and fans each entry out in
 * process to every tail of its stream. A process thus holds one
 * blocked connection however many tails it serves, and parses each entry once.
 *
 * When the set of streams changes, the in-flight XREAD still names the old set. A new
 * stream must not wait for the block to time out, so the command connection sends
 * `CLIENT UNBLOCK <reader id>`, which ends the XREAD at once as if it had timed out, and
 * the loop re-issues it with the new set. The unblock can arrive before the XREAD does
 * (they travel on two connections), so it is retried until the read in flight names
 * the current set; the block timeout is only a backstop for a lost race or a silent
 * connection. A short block timeout alone would cost either latency for new streams or
 * a stream of empty reads. A stream that loses its last tail is simply left out of the
 * next XREAD.
 *
 * This reader serves a standalone server. On a Redis Cluster one XREAD cannot name
 * streams of several slots; `cluster-reader.ts` serves the same interface there.
 */
import type { Redis } from 'ioredis';
import { parseEntries, type LogEntry, type RawEntry } from './entries.ts';
import { fanOut, fanOutLanded, type FannedStream } from './fan-out.ts';
import { entryId } from './keys.ts';
import { Subscription } from '../subscription.ts';

/** What the store asks of its fan-out, on a standalone server or a cluster. */
export interface LogFeed {
  /** See `LogFeed.subscribe`. */
  subscribe(stream: string, seen: number): Subscription;
  /** Leaves the fan-out; a stream without subscriptions is no longer read. */
  unsubscribe(subscription: Subscription): void;
  /**
   * Records this store instance has just landed on `stream` (in cursor order), handed to
   * its subscriptions at once where that keeps the order (`fan-out.ts`).
   */
  published(stream: string, entries: readonly LogEntry[]): void;
  /** Ends every subscription and the reader's connections. */
  close(): Promise<void>;
}

/** Backstop for the block; a change of the stream set unblocks at once. */
export const BLOCK_MS = 5_000;
/** Entries per stream per read: bounds one reply, the loop reads again at once. */
const READ_COUNT = 500;
/** Pause after a failed read (server down, reconnecting). */
const RETRY_MS = 200;
/** Tries to unblock one read that names an outdated set, 1 ms apart. */
const UNBLOCK_ATTEMPTS = 200;

interface Watch extends FannedStream {
  readonly stream: string;
  readonly key: string;
}

export interface StreamReaderOptions {
  /** The instance's command connection: it sends CLIENT UNBLOCK. */
  readonly command: Redis;
  /**
   * Makes a dedicated blocking connection that never reconnects by itself (ioredis
   * `retryStrategy: () => null`); called on the first subscription and after each end.
   */
  readonly connect: () => Redis;
  /** The log key of a stream. */
  readonly logKey: (stream: string) => string;
  /** Entries a subscription may buffer before it falls back to XRANGE. */
  readonly capacity: number;
  /** Reads that fail are retried; this hears why. */
  readonly onError: (error: unknown) => void;
}

/** Multiplexes every tail of a store instance onto one blocking XREAD. */
export class StreamReader implements LogFeed {
  readonly #options: StreamReaderOptions;
  readonly #watches = new Map<string, Watch>();
  #reader: Redis | undefined;
  #readerId: number | undefined;
  #loop: Promise<void> | undefined;
  #idle: (() => void) | undefined;
  /** Grows with every change of the watched set an in-flight read must see. */
  #generation = 0;
  #requests = 0;
  #inflight: { readonly request: number; readonly generation: number } | undefined;
  #unblocking = false;
  #closed = false;

  constructor(options: StreamReaderOptions) {
    this.#options = options;
  }

  /** See `LogFeed.subscribe`. */
  subscribe(stream: string, seen: number): Subscription {
    if (this.#closed) throw new Error('the log store is closed');
    let watch = this.#watches.get(stream);
    if (watch === undefined) {
      watch = { stream, key: this.#options.logKey(stream), pos: seen, subs: new Set() };
      this.#watches.set(stream, watch);
      this.#changed();
    }
    const subscription = new Subscription(stream, watch.pos, this.#options.capacity);
    watch.subs.add(subscription);
    this.#loop ??= this.#run();
    return subscription;
  }

  /** Leaves the fan-out; a stream without subscriptions is no longer read. */
  unsubscribe(subscription: Subscription): void {
    const watch = this.#watches.get(subscription.stream);
    if (watch?.subs.delete(subscription) === true && watch.subs.size === 0) {
      this.#watches.delete(subscription.stream);
    }
  }

  /** See `LogFeed.published`. */
  published(stream: string, entries: readonly LogEntry[]): void {
    const watch = this.#watches.get(stream);
    fanOutLanded(watch, entries);
    if (watch?.subs.size === 0) this.#watches.delete(stream);
  }

  /** Ends every subscription and the blocking connection. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const watch of this.#watches.values()) {
      for (const subscription of watch.subs) subscription.end();
    }
    this.#watches.clear();
    this.#idle?.();
    this.#reader?.disconnect();
    await this.#loop;
  }

  /**
   * The blocking connection, made afresh whenever the last one ended. It never reconnects
   * by itself: ioredis would resend the blocked XREAD on the
   * new connection, where it holds the connection until it times out and the reader's
   * new id cannot be learnt meanwhile; and with resending off it drops the read without
   * settling it (ioredis 6). Ending instead fails the read, and the loop starts over.
   */
  #connection(): Redis {
    if (this.#reader === undefined || this.#reader.status === 'end') {
      this.#reader = this.#options.connect();
      this.#reader.on('error', this.#options.onError);
      this.#readerId = undefined;
    }
    return this.#reader;
  }

  async #run(): Promise<void> {
    while (!this.#closed) {
      if (this.#watches.size === 0) {
        await new Promise<void>((resolve) => (this.#idle = resolve));
        continue;
      }
      try {
        const reader = this.#connection();
        this.#readerId ??= await reader.client('ID');
        const watches = [...this.#watches.values()];
        this.#inflight = { request: ++this.#requests, generation: this.#generation };
        const reply = await reader.xread(
          'COUNT',
          READ_COUNT,
          'BLOCK',
          BLOCK_MS,
          'STREAMS',
          ...watches.map((watch) => watch.key),
          ...watches.map((watch) => entryId(watch.pos)),
        );
        this.#inflight = undefined;
        if (reply !== null) this.#dispatch(watches, reply);
      } catch (error) {
        this.#inflight = undefined;
        // close() disconnects the reader, which fails the read in flight.
        if (this.#isClosed()) return;
        this.#options.onError(error);
        // Whatever failed (the server went, the link went silent past the command
        // timeout), the next read goes out on a fresh connection, from each watch's
        // position: nothing delivered is read twice, nothing landed meanwhile is missed.
        const failed = this.#reader;
        this.#reader = undefined;
        failed?.disconnect();
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  #dispatch(watches: readonly Watch[], reply: [key: string, items: RawEntry[]][]): void {
    const byKey = new Map(watches.map((watch) => [watch.key, watch]));
    for (const [key, items] of reply) {
      const watch = byKey.get(key);
      // Left meanwhile (or left and joined again, reading from its own position).
      if (watch === undefined || this.#watches.get(watch.stream) !== watch) continue;
      if (!fanOut(watch, parseEntries(watch.stream, items))) this.#watches.delete(watch.stream);
    }
  }

  /** Read through a call: the loop's condition would otherwise narrow it across awaits. */
  #isClosed(): boolean {
    return this.#closed;
  }

  #changed(): void {
    this.#generation += 1;
    const idle = this.#idle;
    this.#idle = undefined;
    idle?.();
    void this.#unblock().catch(this.#options.onError);
  }

  async #unblock(): Promise<void> {
    if (this.#unblocking) return;
    this.#unblocking = true;
    let unblocked: number | undefined;
    try {
      for (let attempt = 0; attempt < UNBLOCK_ATTEMPTS; attempt++) {
        const read = this.#inflight;
        if (this.#closed || read === undefined || read.generation >= this.#generation) return;
        if (read.request !== unblocked && this.#readerId !== undefined) {
          const answer = await this.#options.command.client('UNBLOCK', this.#readerId);
          if (answer === 1) unblocked = read.request;
        }
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    } finally {
      this.#unblocking = false;
    }
  }
}
