/**
 * What the Redis store asks of its fan-out (`LogFeed`, served by `wake-reader.ts`), and
 * what that reader asks of the servers it reads (`ReaderTopology`, made in `client.ts`
 * for a standalone server or a cluster).
 */
import type { Redis } from 'ioredis';
import type { Subscription } from '../subscription.ts';
import type { LogEntry, RawEntry } from './entries.ts';

/** What the store asks of its fan-out. */
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

/** The servers the reader follows streams on: one standalone server, or a cluster. */
export interface ReaderTopology {
  /** The master (`host:port`) that owns `slot`, as last learnt; undefined when unknown. */
  nodeOf(slot: number): string | undefined;
  /** Learns the slot map again (a slot moved, a master went); nothing on a standalone server. */
  refresh(): Promise<void>;
  /** Opens a subscriber connection to `node` that neither reconnects nor resubscribes by itself. */
  connect(node: string): Redis;
  /** Up to `count` entries of the stream `log` from the entry id `start` on. */
  xrange(log: string, start: string, count: number): Promise<RawEntry[]>;
}
