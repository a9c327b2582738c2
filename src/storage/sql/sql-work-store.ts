/**
 * The work store on SQL (`../work-store.ts`), one code path for SQLite and PostgreSQL.
 *
 * Every verb but a checkpoint is one statement, so it is atomic on its own: an upsert
 * whose `DO UPDATE ... WHERE` is the compare (a conflicting writer waits for the row and
 * sees the committed value, PostgreSQL's READ COMMITTED re-check included), and whose
 * `RETURNING` row says whether it wrote. A checkpoint moves `usage_counted` and the
 * usage row in one transaction (`addUsageIn`).
 */
import type { UsageDelta } from '../control-store.ts';
import { SESSION_LEASE_PREFIX, type DueEntry, type WorkStore } from '../work-store.ts';
import { int, text, type SqlDriver } from './driver.ts';
import { addUsageIn } from './usage.ts';

/** What a mark does to a session's existing entry: keep the earlier time, a new stamp. */
const MARK_CONFLICT = `ON CONFLICT (session) DO UPDATE SET
  at = CASE WHEN due.at IS NULL OR excluded.at < due.at THEN excluded.at ELSE due.at END,
  stamp = due.stamp + 1`;

export class SqlWorkStore implements WorkStore {
  readonly #driver: SqlDriver;
  /** Where due marks are written: `driver`, or a connection of their own (`constructor`). */
  readonly #marks: SqlDriver;

  /**
   * Takes `driver` over, and `marks` when given: `close()` closes them. Due marks are what
   * an append that drives a turn waits for, so on a pool they get a connection of their
   * own (`marks`): a burst of drivers starting at once (a thousand sessions woken
   * together) queues its lease, row and state statements on `driver`, and an append's
   * mark queued behind them made a conversation already under way wait for every other
   * session's start (`npm run bench:turns`, 1,000 sessions). An append's marks are
   * written one statement at a time (`src/turns/due-marks.ts`), so one connection serves
   * them and the marks of sessions opening.
   */
  constructor(driver: SqlDriver, marks: SqlDriver = driver) {
    this.#driver = driver;
    this.#marks = marks;
  }

  async acquireLease(name: string, holder: string, now: number, ms: number): Promise<boolean> {
    const rows = await this.#driver.query(
      `INSERT INTO leases (name, holder, expires) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires = excluded.expires
       WHERE leases.holder = excluded.holder OR leases.expires <= ?
       RETURNING holder`,
      [name, holder, now + ms, now],
    );
    return rows.length > 0;
  }

  async renewLeases(
    names: readonly string[],
    holder: string,
    now: number,
    ms: number,
  ): Promise<string[]> {
    if (names.length === 0) return [];
    const rows = await this.#driver.query(
      `UPDATE leases SET expires = ?
       WHERE holder = ? AND name IN (${names.map(() => '?').join(', ')})
       RETURNING name`,
      [now + ms, holder, ...names],
    );
    return rows.map((row) => text(row, 'name'));
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.#driver.query('DELETE FROM leases WHERE name = ? AND holder = ?', [name, holder]);
  }

  async markDue(session: string, at: number): Promise<number> {
    const [row] = await this.#marks.query(
      `INSERT INTO due (session, at, stamp) VALUES (?, ?, 1) ${MARK_CONFLICT} RETURNING stamp`,
      [session, at],
    );
    if (row === undefined) throw new Error(`the due entry of ${session} was not written`);
    return int(row, 'stamp');
  }

  async markDueMany(
    marks: readonly { readonly session: string; readonly at: number }[],
  ): Promise<void> {
    // One row per session: an upsert may not touch a row twice.
    const earliest = new Map<string, number>();
    for (const { session, at } of marks) {
      earliest.set(session, Math.min(at, earliest.get(session) ?? at));
    }
    if (earliest.size === 0) return;
    await this.#marks.query(
      `INSERT INTO due (session, at, stamp)
       VALUES ${[...earliest].map(() => '(?, ?, 1)').join(', ')} ${MARK_CONFLICT}`,
      [...earliest].flat(),
    );
  }

  async dueEntry(session: string): Promise<DueEntry | null> {
    const [row] = await this.#driver.query(
      'SELECT at, stamp FROM due WHERE session = ? AND at IS NOT NULL',
      [session],
    );
    return row === undefined ? null : { at: int(row, 'at'), stamp: int(row, 'stamp') };
  }

  async settleDue(session: string, stamp: number, next: number | null): Promise<boolean> {
    if (stamp !== 0) {
      const rows = await this.#driver.query(
        'UPDATE due SET at = ? WHERE session = ? AND stamp = ? AND at IS NOT NULL RETURNING stamp',
        [next, session, stamp],
      );
      return rows.length > 0;
    }
    if (next === null) {
      // Removing "no entry" succeeds exactly when no entry is set.
      return (await this.dueEntry(session)) === null;
    }
    // A kept row (at NULL) is revived under the next stamp, never under the one it had.
    const rows = await this.#driver.query(
      `INSERT INTO due (session, at, stamp) VALUES (?, ?, 1)
       ON CONFLICT (session) DO UPDATE SET at = excluded.at, stamp = due.stamp + 1
       WHERE due.at IS NULL
       RETURNING stamp`,
      [session, next],
    );
    return rows.length > 0;
  }

  async due(now: number, limit: number): Promise<string[]> {
    const rows = await this.#driver.query(
      `SELECT session FROM due
       WHERE at IS NOT NULL AND at <= ?
         AND NOT EXISTS (
           SELECT 1 FROM leases WHERE leases.name = CAST(? AS TEXT) || due.session AND leases.expires > ?)
       ORDER BY at, session LIMIT ?`,
      [now, SESSION_LEASE_PREFIX, now, Math.max(0, limit)],
    );
    return rows.map((row) => text(row, 'session'));
  }

  async saveTurnState(session: string, cursor: number, state: string): Promise<void> {
    await this.#driver.query(
      `INSERT INTO turn_states (session, cursor, state) VALUES (?, ?, ?)
       ON CONFLICT (session) DO UPDATE SET cursor = excluded.cursor, state = excluded.state
       WHERE turn_states.cursor < excluded.cursor`,
      [session, cursor, state],
    );
  }

  async turnState(session: string): Promise<{ cursor: number; state: string } | null> {
    const [row] = await this.#driver.query(
      'SELECT cursor, state FROM turn_states WHERE session = ?',
      [session],
    );
    return row === undefined ? null : { cursor: int(row, 'cursor'), state: text(row, 'state') };
  }

  async dropTurnState(session: string): Promise<void> {
    await this.#driver.query('DELETE FROM turn_states WHERE session = ?', [session]);
  }

  async countedThrough(session: string): Promise<number> {
    const [row] = await this.#driver.query('SELECT through FROM usage_counted WHERE session = ?', [
      session,
    ]);
    return row === undefined ? 0 : int(row, 'through');
  }

  checkpointUsage(
    session: string,
    expect: number,
    through: number,
    tenant: string,
    day: string,
    delta: UsageDelta,
  ): Promise<boolean> {
    return this.#driver.transaction(async (tx) => {
      // An absent row counts as 0, so only `expect` 0 may create it.
      const moved =
        expect === 0
          ? await tx.query(
              `INSERT INTO usage_counted (session, through) VALUES (?, ?)
               ON CONFLICT (session) DO UPDATE SET through = excluded.through
               WHERE usage_counted.through = 0
               RETURNING through`,
              [session, through],
            )
          : await tx.query(
              'UPDATE usage_counted SET through = ? WHERE session = ? AND through = ? RETURNING through',
              [through, session, expect],
            );
      if (moved.length === 0) return false;
      await addUsageIn(tx, this.#driver.dialect, tenant, day, delta);
      return true;
    });
  }

  async close(): Promise<void> {
    await this.#driver.close();
    if (this.#marks !== this.#driver) await this.#marks.close();
  }
}
