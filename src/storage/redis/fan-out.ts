/**
 * What the Redis reader (`wake-reader.ts`) does with records of a followed stream,
 * wherever they come from: a read of the stream, or an append this store instance has
 * just landed (`LogFeed.published`). A stream's position is the last cursor handed to
 * its subscriptions; records at or below it were handed on already (an append fanned out
 * before the read that also returns it came back), so they are skipped, and the position
 * never moves back.
 */
import type { Subscription } from '../subscription.ts';
import type { LogEntry } from './entries.ts';

/** A followed stream: where its fan-out stands, and who follows it. */
export interface FannedStream {
  /** The last cursor handed on; the next read starts after it. */
  pos: number;
  readonly subs: Set<Subscription>;
}

/**
 * Hands `entries` (in cursor order) past the stream's position to its subscriptions,
 * letting go of those that cannot take them; answers whether any subscription is left.
 */
export function fanOut(watch: FannedStream, entries: readonly LogEntry[]): boolean {
  const fresh = entries.filter((entry) => entry.record.envelope.cursor > watch.pos);
  const last = fresh.at(-1);
  if (last === undefined) return watch.subs.size > 0;
  watch.pos = last.record.envelope.cursor;
  for (const subscription of watch.subs) {
    if (!subscription.push(fresh)) watch.subs.delete(subscription);
  }
  return watch.subs.size > 0;
}

/**
 * Records this instance has just landed on a stream it follows: handed on at once when
 * they continue what was handed on last, so a tail in this process does not wait for the
 * read to bring them back. Otherwise (a record of another process lies between, not read
 * yet) they are left to the read, which keeps the order.
 */
export function fanOutLanded(watch: FannedStream | undefined, entries: readonly LogEntry[]): void {
  const first = entries[0];
  if (watch === undefined || first === undefined) return;
  if (first.record.envelope.cursor !== watch.pos + 1) return;
  fanOut(watch, entries);
}
