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

/** What a feed asks of its fan-out when a wake comes. */
interface FeedOwner {
  pump(feed: Feed): void;
  offer(stream: string, records: readonly StoredRecord[], final: boolean): void;
}

/**
 * One stream's feed, and the listener of its wakes (`Wakeups.listen`) while it lives: a
 * class rather than an object with a closure, since every stream with a live tail has one.
 */
class Feed implements WakeListener {
  readonly stream: string;
  /** The last cursor handed to the subscriptions; the next read asks for what follows. */
  pos: number;
  /**
   * The tails' subscriptions, in an array: most streams have one tail, and a set would
   * hold a table of its own for each. Replaced, never changed in place, so that a tail
   * that leaves while records are handed out (its listener ends it) changes no array
   * being walked.
   */
  subs: readonly Subscription[] = [];
  reading = false;
  /** A wake came during the read in flight: read once more after it. */
  again = false;
  readonly #owner: FeedOwner;

  constructor(owner: FeedOwner, stream: string, pos: number) {
    this.#owner = owner;
    this.stream = stream;
    this.pos = pos;
  }

  woken(head: number | undefined, records: readonly StoredRecord[] | undefined): void {
    if (head !== undefined && head <= this.pos) return;
    // Records a notification carried are committed, like this instance's own.
    if (records === undefined) this.#owner.pump(this);
    else this.#owner.offer(this.stream, records, false);
  }

  add(subscription: Subscription): void {
    // `concat` sizes the array to fit; a spread leaves room to grow in each.
    this.subs = this.subs.concat(subscription);
  }

  /** Takes `subscription` out; answers true when it was in. */
  remove(subscription: Subscription): boolean {
    if (!this.subs.includes(subscription)) return false;
    this.subs = this.subs.filter((held) => held !== subscription);
    return true;
  }
}

/** Multiplexes the tails of a store instance onto one reader per stream. */
export class StreamFanout {
  readonly #options: StreamFanoutOptions;
  readonly #feeds = new Map<string, Feed>();
  /** What every feed of this fan-out calls on a wake: made once, not once per feed. */
  readonly #owner: FeedOwner = {
    pump: (feed) => {
      this.#pump(feed);
    },
    offer: (stream, records, final) => {
      this.offer(stream, records, final);
    },
  };
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
    feed.add(subscription);
    return subscription;
  }

  /** Leaves the fan-out; a stream without subscriptions is no longer read. */
  unsubscribe(subscription: Subscription): void {
    const feed = this.#feeds.get(subscription.stream);
    if (feed?.remove(subscription) === true && feed.subs.length === 0) this.#retire(feed);
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
      this.#options.wakeups.unlisten(feed.stream, feed);
      for (const subscription of feed.subs) subscription.end();
    }
    this.#feeds.clear();
  }

  /** A feed for the first tail of `stream`; it reads at once, see the header. */
  #open(stream: string, seen: number): Feed {
    const feed = new Feed(this.#owner, stream, seen);
    this.#options.wakeups.listen(stream, feed);
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
      let refused = false;
      for (const subscription of feed.subs) if (!subscription.push(fed)) refused = true;
      // One that could not take them was dropped or had ended: it reads for itself now.
      if (refused) feed.subs = feed.subs.filter((held) => !held.dropped && !held.ended);
    }
    if (final !== null && feed.pos >= final) {
      // Nothing can follow the archiving record. A tail that did not get it here reads it.
      if (fed.at(-1)?.final !== true) for (const subscription of feed.subs) subscription.drop();
      this.#retire(feed);
    } else if (feed.subs.length === 0) {
      this.#retire(feed);
    }
  }

  #retire(feed: Feed): void {
    if (this.#feeds.get(feed.stream) !== feed) return;
    this.#feeds.delete(feed.stream);
    this.#options.wakeups.unlisten(feed.stream, feed);
  }

  #live(feed: Feed): boolean {
    return !this.#closed && this.#feeds.get(feed.stream) === feed;
  }
}
