/**
 * The fan-out of a store instance: every tail of the instance fed from one read per
 * stream however many tails follow it, on a standalone server or a Redis Cluster alike.
 *
 * The append and archive scripts publish each new head on the session's shard channel
 * (`keys.ts`), and the reader holds one subscriber connection per master (a standalone
 * server is the one master of all slots), subscribed there to the channels of the
 * streams it follows. A wake naming a head past where the reader stands reads the stream
 * with XRANGE (on a cluster through the cluster client, which follows MOVED and ASK).
 * The wakes of this instance's own appends name heads the fan-out has handed on already
 * (`LogFeed.published`), so they cost a comparison and no read: a process reads back
 * only what other processes landed (docs/architecture.md says what this replaced).
 *
 * Nothing is lost between subscribing and the first wake: every (re)subscription is
 * followed by a read from where the reader stands. A stream is read by one read at a
 * time, and a wake during a read reads again after it, so entries go out in order, once.
 * The reader follows a stream to the master that owns it: when a slot leaves a master,
 * that master drops its channels (an unsolicited SUNSUBSCRIBE; ioredis emits `moved`, as
 * for a MOVED answer to SSUBSCRIBE), and when a connection ends, the reader refreshes
 * the slot map, subscribes at the new owner and reads. While a slot migrates, the
 * scripts run on the importing master, whose wakes no one hears until the slot hands
 * over; the backstop, a read of every stream every few seconds (`backstop.ts`), bounds
 * that wait and any other lost wake (a link gone silent, a process of an older version).
 */
import type { Redis } from 'ioredis';
import { Backstop } from './backstop.ts';
import { parseEntries, type LogEntry, type RawEntry } from './entries.ts';
import type { LogFeed, ReaderTopology } from './feed.ts';
import { fanOut, fanOutLanded, type FannedStream } from './fan-out.ts';
import { entryId, keySlot, type SessionKeys } from './keys.ts';
import { Subscription } from '../subscription.ts';

/** Entries per read: bounds one reply, the read goes on at once. */
const READ_COUNT = 500;
/** Pause after a failed read or subscription (a master down, a slot moving). */
const RETRY_MS = 200;

interface Watch extends FannedStream {
  readonly stream: string;
  readonly log: string;
  readonly channel: string;
  readonly slot: number;
  /** The master connection that holds (or is taking) this stream's subscription. */
  link: Link | undefined;
  readonly route: () => void;
  readonly read: () => void;
}

/** The subscriber connection to one master, and the streams it follows there. */
interface Link {
  readonly node: string;
  readonly redis: Redis;
  readonly watches: Set<Watch>;
  readonly reroute: () => void;
}

export interface WakeReaderOptions {
  readonly topology: ReaderTopology;
  readonly keys: (stream: string) => SessionKeys;
  /** Entries a subscription may buffer before it falls back to XRANGE. */
  readonly capacity: number;
  /** Reads and subscriptions that fail are retried; this hears why. */
  readonly onError: (error: unknown) => void;
}

/** Multiplexes every tail of a store instance onto one subscriber connection per master. */
export class WakeReader implements LogFeed {
  readonly #options: WakeReaderOptions;
  readonly #watches = new Map<string, Watch>();
  readonly #byChannel = new Map<string, Watch>();
  readonly #links = new Map<string, Link>();
  readonly #tasks = new Set<Promise<void>>();
  readonly #backstop = new Backstop(this.#watches);
  /** Streams woken in this round of I/O, and the highest head each wake named. */
  #wakes = new Map<Watch, number>();
  #closed = false;

  constructor(options: WakeReaderOptions) {
    this.#options = options;
  }

  /** Every entry above the subscription's `start` (`seen`) reaches it, in order, once. */
  subscribe(stream: string, seen: number): Subscription {
    if (this.#closed) throw new Error('the log store is closed');
    let watch = this.#watches.get(stream);
    if (watch === undefined) {
      const { log, wake } = this.#options.keys(stream);
      const created: Watch = {
        stream,
        log,
        channel: wake,
        slot: keySlot(wake),
        pos: seen,
        subs: new Set(),
        link: undefined,
        route: this.#coalesced(() => this.#route(created)),
        read: this.#coalesced(() => this.#read(created)),
      };
      watch = created;
      this.#watches.set(stream, watch);
      this.#byChannel.set(watch.channel, watch);
      watch.route();
    }
    const subscription = new Subscription(stream, watch.pos, this.#options.capacity);
    watch.subs.add(subscription);
    this.#backstop.start();
    return subscription;
  }

  /** Leaves the fan-out; a stream without subscriptions is no longer followed. */
  unsubscribe(subscription: Subscription): void {
    const watch = this.#watches.get(subscription.stream);
    if (watch?.subs.delete(subscription) === true && watch.subs.size === 0) this.#forget(watch);
  }

  /** See `LogFeed.published`. */
  published(stream: string, entries: readonly LogEntry[]): void {
    const watch = this.#watches.get(stream);
    fanOutLanded(watch, entries);
    if (watch?.subs.size === 0) this.#forget(watch);
  }

  /** Ends every subscription and every master connection. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#backstop.stop();
    for (const watch of this.#watches.values()) {
      for (const subscription of watch.subs) subscription.end();
    }
    this.#watches.clear();
    this.#byChannel.clear();
    for (const link of this.#links.values()) link.redis.disconnect();
    this.#links.clear();
    await Promise.allSettled([...this.#tasks]);
  }

  /** Subscribes the stream at the master owning its slot, then reads what it missed. */
  async #route(watch: Watch): Promise<void> {
    for (let attempt = 0; this.#live(watch); attempt++) {
      if (attempt > 0) {
        await sleep(RETRY_MS);
        await this.#refreshSlots();
        if (!this.#live(watch)) return;
      }
      const node = this.#options.topology.nodeOf(watch.slot);
      if (node === undefined) continue;
      const link = this.#link(node);
      if (watch.link !== link) {
        if (watch.link !== undefined) this.#leave(watch.link, watch);
        watch.link = link;
        link.watches.add(watch);
      }
      try {
        await link.redis.ssubscribe(watch.channel);
      } catch (error) {
        if (this.#closed) return;
        this.#options.onError(error);
        continue;
      }
      // Whatever landed before the subscription took is read now; later heads wake it.
      watch.read();
      return;
    }
  }

  /** Reads the stream from where the reader stands to its end and fans it out. */
  async #read(watch: Watch): Promise<void> {
    while (this.#live(watch)) {
      let items: RawEntry[];
      try {
        const start = entryId(watch.pos + 1);
        items = await this.#options.topology.xrange(watch.log, start, READ_COUNT);
      } catch (error) {
        if (this.#closed) return;
        this.#options.onError(error);
        await sleep(RETRY_MS);
        continue;
      }
      if (!this.#live(watch) || items.length === 0) return;
      if (!fanOut(watch, parseEntries(watch.stream, items))) this.#forget(watch);
      if (items.length < READ_COUNT) return;
    }
  }

  /** The connection to `node` (`host:port`), opened when there is none or it ended. */
  #link(node: string): Link {
    const current = this.#links.get(node);
    if (current !== undefined && current.redis.status !== 'end') return current;
    const redis = this.#options.topology.connect(node);
    const link: Link = {
      node,
      redis,
      watches: new Set(),
      reroute: this.#coalesced(async () => {
        await this.#refreshSlots();
        for (const watch of link.watches) watch.route();
      }),
    };
    this.#links.set(node, link);
    redis.on('error', this.#options.onError);
    redis.on('smessage', (channel: string, head: string) => {
      const watch = this.#byChannel.get(channel);
      if (watch !== undefined) this.#woken(watch, Number(head));
    });
    // A slot left this master (it dropped the slot's channels), or SSUBSCRIBE met MOVED.
    redis.on('moved', link.reroute);
    // The connection is gone (the master failed, or close()): follow its streams anew.
    redis.on('end', () => {
      if (this.#links.get(node) === link) this.#links.delete(node);
      if (this.#closed) return;
      for (const watch of link.watches) {
        if (watch.link !== link) continue;
        watch.link = undefined;
        watch.route();
      }
      link.watches.clear();
    });
    return link;
  }

  /**
   * A wake named `head` for `watch`. Looked at once this round of I/O is over: the wake
   * of an append of this instance comes on another connection than the append's answer,
   * and often first; by the time it is looked at, the answer has usually handed the
   * records on (`published`), and the wake costs no read.
   */
  #woken(watch: Watch, head: number): void {
    if (this.#wakes.size === 0) setImmediate(this.#readWoken);
    if (head > (this.#wakes.get(watch) ?? 0)) this.#wakes.set(watch, head);
  }

  readonly #readWoken = (): void => {
    const woken = this.#wakes;
    this.#wakes = new Map();
    for (const [watch, head] of woken) if (head > watch.pos && this.#live(watch)) watch.read();
  };

  /** Takes `watch` off `link`; the channel stays subscribed only while a stream needs it. */
  #leave(link: Link, watch: Watch): void {
    link.watches.delete(watch);
    if (link.redis.status === 'end') return;
    link.redis.sunsubscribe(watch.channel).catch(this.#options.onError);
  }

  #forget(watch: Watch): void {
    this.#watches.delete(watch.stream);
    this.#byChannel.delete(watch.channel);
    if (watch.link !== undefined) this.#leave(watch.link, watch);
    watch.link = undefined;
  }

  #live(watch: Watch): boolean {
    return !this.#closed && this.#watches.get(watch.stream) === watch;
  }

  async #refreshSlots(): Promise<void> {
    try {
      await this.#options.topology.refresh();
    } catch (error) {
      if (!this.#closed) this.#options.onError(error);
    }
  }

  /**
   * `task` as a trigger: it runs now, or once more after the run in flight when pulled
   * during one, so a burst of wakes costs one read more at most, never a pile of them.
   */
  #coalesced(task: () => Promise<void>): () => void {
    let pulls = 0;
    let done = 0;
    let running = false;
    const run = async (): Promise<void> => {
      running = true;
      try {
        while (done < pulls && !this.#closed) {
          done = pulls;
          await task();
        }
      } catch (error) {
        this.#options.onError(error);
      } finally {
        running = false;
      }
    };
    return () => {
      pulls += 1;
      if (running) return;
      const pending = run();
      this.#tasks.add(pending);
      void pending.finally(() => this.#tasks.delete(pending));
    };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
