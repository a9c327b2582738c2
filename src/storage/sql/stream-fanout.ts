/**
 * The shared reader of a SQL store instance (decisions row 68): while a
 * stream has live tails, one feed per stream reads its new records once per wake-up and
 * fans them out in process to every tail's bounded buffer (`../subscription.ts`). A hundred
 * tails of one stream thus cost one query per wake, never one each.
 *
 * Where records come from:
 * - Appends through this instance hand their records over after commit (`offer`): no
 *   read at all. They are taken only when they continue the feed without a gap; an
 *   append that commits out of turn (another process landed the cursors before it, or
 *   two appends here answered out of order) makes the feed read instead.
 * - Wakes from elsewhere (`wakeups.ts`: a PostgreSQL notification, a SQLite commit by
 *   another connection, a reconnected listener) make the feed read everything above
 *   where it stands, unless the wake carries the records (a PostgreSQL notification
 *   does when they fit) and they continue the feed: those are taken like an `offer`. At
 *   most one read per feed is in flight; wakes meanwhile fold into one more. A wake that
 *   names a head the feed already delivered costs nothing.
 *
 * A feed is made when the first tail of a stream joins and reads once at once: a record
 * may have landed after that tail's last read and before anyone listened. It goes when
 * its last tail leaves or after it delivered the archiving record. A failed read lets go
 * of every tail of the stream; each reads the log itself, where the failure (if it
 * lasts) reaches its consumer as before.
 */
import type { StoredRecord } from '../log-store.ts';
import type { LogPage } from './log-reads.ts';
import { Subscription, type FedRecord } from '../subscription.ts';
import type { WakeListener, Wakeups } from './wakeups.ts';

/** Records per read of a feed; a fuller answer is followed by another read at once. */
const READ_LIMIT = 256;

export interface StreamFanoutOptions {
  readonly wakeups: Wakeups;
  /** Records of `stream` from `from` (inclusive) in cursor order, at most `limit`. */
  readonly read: (stream: string, from: number, limit: number) => Promise<LogPage>;
  /** Records a tail may have buffered before it is dropped and reads for itself. */
  readonly capacity: number;
}

interface Feed {
  readonly stream: string;
  /** The last cursor handed to the subscriptions; the next read asks for what follows. */
  pos: number;
  readonly subs: Set<Subscription>;
  reading: boolean;
  /** A wake came during the read in flight: read once more after it. */
  again: boolean;
  /** Hears the stream's wakes (`Wakeups.listen`) while the feed lives. */
  readonly woken: WakeListener;
}

/** Multiplexes the tails of a store instance onto one reader per stream. */
export class StreamFanout {
  readonly #options: StreamFanoutOptions;
  readonly #feeds = new Map<string, Feed>();
  #closed = false;

  constructor(options: StreamFanoutOptions) {
    this.#options = options;
  }

  /**
   * Joins the fan-out of `stream` for a tail that has seen every record up to `seen`,
   * which must not be above the stream's head. The subscription receives every record
   * above its `start`: `seen` when the stream had no feed, else where the feed stands
   * (the tail reads the records between the two itself and drops repeats by cursor).
   */
  subscribe(stream: string, seen: number): Subscription {
    const { capacity } = this.#options;
    if (this.#closed) {
      const ended = new Subscription(stream, seen, capacity);
      ended.end();
      return ended;
    }
    const feed = this.#feeds.get(stream) ?? this.#open(stream, seen);
    const subscription = new Subscription(stream, feed.pos, capacity);
    feed.subs.add(subscription);
    return subscription;
  }

  /** Leaves the fan-out; a stream without subscriptions is no longer read. */
  unsubscribe(subscription: Subscription): void {
    const feed = this.#feeds.get(subscription.stream);
    if (feed?.subs.delete(subscription) === true && feed.subs.size === 0) this.#retire(feed);
  }

  /**
   * Hands over records this instance just committed to `stream`, in cursor order;
   * `final` when they end with the archiving record. Must be called after commit only.
   */
  offer(stream: string, records: readonly StoredRecord[], final: boolean): void {
    const feed = this.#feeds.get(stream);
    const first = records[0];
    const last = records.at(-1);
    if (feed === undefined || first === undefined || last === undefined) return;
    // Cursors between the feed and these records landed elsewhere or answer later: read.
    if (first.envelope.cursor > feed.pos + 1) this.#pump(feed);
    else this.#deliver(feed, records, final ? last.envelope.cursor : null);
  }

  /** Ends every subscription; feeds read no more. */
  close(): void {
    this.#closed = true;
    for (const feed of this.#feeds.values()) {
      this.#options.wakeups.unlisten(feed.stream, feed.woken);
      for (const subscription of feed.subs) subscription.end();
    }
    this.#feeds.clear();
  }

  /** A feed for the first tail of `stream`; it reads at once, see the header. */
  #open(stream: string, seen: number): Feed {
    const feed: Feed = {
      stream,
      pos: seen,
      subs: new Set(),
      reading: false,
      again: false,
      woken: (head, records) => {
        if (head !== undefined && head <= feed.pos) return;
        // Records a notification carried are committed, like this instance's own.
        if (records === undefined) this.#pump(feed);
        else this.offer(stream, records, false);
      },
    };
    this.#options.wakeups.listen(stream, feed.woken);
    this.#feeds.set(stream, feed);
    this.#pump(feed);
    return feed;
  }

  #pump(feed: Feed): void {
    if (feed.reading) {
      feed.again = true;
      return;
    }
    feed.reading = true;
    void this.#drain(feed);
  }

  /** Reads until the feed is level with the stream as of its last wake. */
  async #drain(feed: Feed): Promise<void> {
    try {
      do {
        feed.again = false;
        const page = await this.#options.read(feed.stream, feed.pos + 1, READ_LIMIT);
        if (!this.#live(feed)) return;
        this.#deliver(feed, page.records, page.final);
        if (page.records.length === READ_LIMIT) feed.again = true;
      } while (feed.again && this.#live(feed));
    } catch {
      if (!this.#live(feed)) return;
      // Each tail reads for itself now: a passing failure costs a read, a lasting one
      // reaches the tails' consumers through their own reads.
      for (const subscription of feed.subs) subscription.drop();
      this.#retire(feed);
    } finally {
      feed.reading = false;
    }
  }

  /** Hands every record that continues the feed to every subscription. */
  #deliver(feed: Feed, records: readonly StoredRecord[], final: number | null): void {
    const fed: FedRecord[] = [];
    for (const record of records) {
      const { cursor } = record.envelope;
      if (cursor <= feed.pos) continue;
      if (cursor !== feed.pos + 1) break;
      fed.push({ record, final: cursor === final });
      feed.pos = cursor;
    }
    if (fed.length > 0) {
      for (const subscription of feed.subs) {
        if (!subscription.push(fed)) feed.subs.delete(subscription);
      }
    }
    if (final !== null && feed.pos >= final) {
      // Nothing can follow the archiving record. A tail that did not get it here reads it.
      if (fed.at(-1)?.final !== true) for (const subscription of feed.subs) subscription.drop();
      this.#retire(feed);
    } else if (feed.subs.size === 0) {
      this.#retire(feed);
    }
  }

  #retire(feed: Feed): void {
    if (this.#feeds.get(feed.stream) !== feed) return;
    this.#feeds.delete(feed.stream);
    this.#options.wakeups.unlisten(feed.stream, feed.woken);
  }

  #live(feed: Feed): boolean {
    return !this.#closed && this.#feeds.get(feed.stream) === feed;
  }
}
