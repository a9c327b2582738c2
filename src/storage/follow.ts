/**
 * The one loop every log backend's tail runs (interface 4.2, decisions row 68): it
 * catches up by reading pages from its `from`, then joins the backend's fan-out and
 * yields every record once, in cursor order, until the archiving record, `to`, an abort
 * or the store's close, returning cleanly in each case. A backend gives it its reads, the
 * point to join at, and its fan-out (a Redis stream reader, or the SQL stores' feed that
 * `LISTEN/NOTIFY` and the SQLite doorbell wake), whose `Subscription` is what the tail
 * waits on.
 *
 * Joining without gap or duplicate: the tail joins as having seen `min(next - 1, head)`,
 * never above the head, so every record landing later reaches it. Records the fan-out
 * already stood past are read here; records it delivers again are dropped by cursor; a
 * gap (which the fan-out never makes) is filled by a read before the next record is
 * yielded. A subscription whose bounded buffer overflowed is dropped by the fan-out; the
 * tail then catches up by reading and joins again. Pages are bounded in records and in
 * bytes (`page-sizer.ts`), so a tail of a long session holds at most one page in memory
 * while it catches up.
 */
import type { StoredRecord, TailOptions } from './log-store.ts';
import { Follower } from './follower.ts';
import type { TailBackend, TailPage } from './tail-backend.ts';

export type { TailBackend, TailPage } from './tail-backend.ts';

/** Follows `stream` from `options.from` over `backend`; see `LogStore.tail`. */
export function followLog<P extends TailPage>(
  backend: TailBackend<P>,
  stream: string,
  options: TailOptions,
): AsyncIterableIterator<StoredRecord, void, undefined> {
  return new Follower(backend, stream, options);
}
