/**
 * What a log backend gives the one tail loop every backend runs (`follow.ts`): its
 * catch-up reads, the point a caught-up tail joins at, and its fan-out.
 */
import type { StoredRecord } from './log-store.ts';
import type { Subscription } from './subscription.ts';

/** One catch-up read. */
export interface TailPage {
  readonly records: readonly StoredRecord[];
  /** The archiving record's cursor when the read saw the stream archived, else null. */
  readonly final: number | null;
}

/** Where a caught-up tail joins the fan-out. */
export interface JoinPoint {
  /** The stream's head; 0 for a stream with no record. */
  readonly head: number;
  /** The archiving record's cursor, or null while the stream is open. */
  readonly final: number | null;
}

/** What one backend gives the loop. */
export interface TailBackend<P extends TailPage> {
  /** Records per catch-up read, at most (`page-sizer.ts` starts lower and bounds bytes). */
  readonly pageSize: number;
  /** Aborted when the store closes: a read it cuts short ends the tail instead of failing it. */
  readonly closed: AbortSignal;
  /** Records from `from` up to `to` (exclusive; undefined: no bound), at most `limit`. */
  read(stream: string, from: number, to: number | undefined, limit: number): Promise<P>;
  /** The head and archiving record as of `last`, the page that ended the catch-up, or later. */
  joinPoint(stream: string, last: P): Promise<JoinPoint>;
  subscribe(stream: string, seen: number): Subscription;
  unsubscribe(subscription: Subscription): void;
}
