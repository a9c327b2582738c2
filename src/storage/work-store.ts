/**
 * The work store port: what several service processes share to split background work
 * among themselves without a coordinator.
 *
 * - Leases: a named lease is held by one holder until it expires; the holder renews it.
 * - Due entries: a session that has work to do at some time (a turn to resume, a
 *   checkpoint to take). Every mark gives the entry a new stamp, so a worker that read an
 *   entry can settle it with a compare-and-set and never erases a mark made after its read.
 * - Saved turn states: a session's turn state at a cursor, so taking a long session up
 *   replays only what came after (`src/turns/state-snapshot.ts`).
 * - Counted usage: how far along a session's log usage has been added to the tenant's
 *   rows, moved with the usage in one transaction, so a delta is counted exactly once.
 *
 * Times are unix ms given by the caller (the injected clock), never read by the store.
 * The SQL backend keeps it in the control store's database, whichever store holds the log.
 */
import type { UsageDelta } from './control-store.ts';

/** A session's due entry: when it is due, and the stamp of its latest mark. */
export interface DueEntry {
  readonly at: number;
  readonly stamp: number;
}

/** The name of the lease a session's driver holds (see `WorkStore.due`). */
export function sessionLease(session: string): string {
  return `${SESSION_LEASE_PREFIX}${session}`;
}

/** What `sessionLease` puts before the session id; the SQL store matches on it. */
export const SESSION_LEASE_PREFIX = 'session:';

export interface WorkStore {
  /**
   * Takes or renews the lease `name` for `holder` until `now + ms`; answers true when
   * `holder` holds it. The lease is free when absent, expired (`expires <= now`) or
   * already held by `holder`.
   */
  acquireLease(name: string, holder: string, now: number, ms: number): Promise<boolean>;
  /**
   * Renews, until `now + ms`, each of the leases `names` that `holder` still holds (as
   * `acquireLease` would, in one step); answers the names it renewed. A lease another
   * holder took is left alone and left out of the answer.
   */
  renewLeases(names: readonly string[], holder: string, now: number, ms: number): Promise<string[]>;
  /** Drops the lease when `holder` holds it; otherwise changes nothing. */
  releaseLease(name: string, holder: string): Promise<void>;
  /**
   * Marks `session` due at `at`, keeping an earlier due time if one is set; answers the
   * entry's new stamp. The stamp strictly grows with every mark of the session, also
   * across `settleDue` removing the entry: a stamp is never reused for a session.
   */
  markDue(session: string, at: number): Promise<number>;
  /**
   * `markDue` for several sessions in one step: each is marked once (at the earliest of
   * its times when it comes more than once), and its stamp grows as a mark's would.
   */
  markDueMany(marks: readonly { readonly session: string; readonly at: number }[]): Promise<void>;
  /** The session's due entry, or null when none is set. */
  dueEntry(session: string): Promise<DueEntry | null>;
  /**
   * Compare-and-set: when the entry's stamp is `stamp` (0: no entry is set), sets its due
   * time to `next`, or removes the entry when `next` is null; answers whether it did.
   * Settling an entry keeps its stamp. With stamp 0 and a `next` it creates the entry,
   * under a fresh stamp as a mark would, so a stamp read before a removal never matches
   * the entry created after it.
   */
  settleDue(session: string, stamp: number, next: number | null): Promise<boolean>;
  /**
   * Up to `limit` sessions due at or before `now`, earliest first (ties by session),
   * leaving out those whose driver's lease (`sessionLease`) is held at `now`: the holder
   * is at work on them, and a sweep elsewhere could not take them anyway.
   */
  due(now: number, limit: number): Promise<string[]>;
  /** The last cursor of `session` whose usage is counted (0 when none). */
  countedThrough(session: string): Promise<number>;
  /**
   * In one transaction: when `countedThrough(session)` is `expect`, sets it to `through`
   * and adds `delta` to the tenant's usage row of `day` (as `ControlStore.addUsage`
   * does); answers false, changing nothing, when another checkpoint moved it first.
   */
  checkpointUsage(
    session: string,
    expect: number,
    through: number,
    tenant: string,
    day: string,
    delta: UsageDelta,
  ): Promise<boolean>;
  /**
   * Keeps `state` as the session's saved turn state at `cursor`, unless one at a later
   * cursor is kept already (a slower writer never replaces a newer save).
   */
  saveTurnState(session: string, cursor: number, state: string): Promise<void>;
  /** The session's saved turn state, or null when none is kept. */
  turnState(session: string): Promise<{ readonly cursor: number; readonly state: string } | null>;
  /** Forgets the session's saved turn state (its driver has nothing left to do). */
  dropTurnState(session: string): Promise<void>;
  /** Releases the store's connections; a second call is a no-op. */
  close(): Promise<void>;
}
