/**
 * Appending as one transaction of several statements: every append on SQLite, and
 * archiving on both engines (interface 2.2 to 2.4, 3.1; decisions rows 9, 12, 13).
 *
 * For each stream of the group: lock its row (created on first use), then for each of its
 * batches in order check the key, refuse an archived stream, mint `head + 1 …` and one
 * `at`, insert, move `head` and record the key; signal the tails once per stream. The
 * row lock (SQLite: the one write lock `BEGIN IMMEDIATE` takes) serialises every writer
 * of a stream across connections and processes, so cursors have no gap and no duplicate,
 * and the group lands whole or is rolled back whole. SQLite runs in process, so the
 * several statements cost no round trips; PostgreSQL appends go through one function call
 * instead (`append-postgres.ts`).
 *
 * `at` comes from the injected clock, read after the lock is held and never below the
 * stream's previous `at`: tests can freeze it, and it cannot go back along a stream even
 * across hosts whose clocks disagree a little.
 */
import type { Clock } from '../../clock.ts';
import { refusalError } from '../outcomes.ts';
import type { AppendBatch, AppendResult, PendingRecord, StoredRecord } from '../log-store.ts';
import { int, text, valuesList, type SqlDriver, type SqlQueryable } from './driver.ts';
import type { ItemOutcome } from './group-runner.ts';
import { COLUMNS, readRange, stamp } from './log-reads.ts';
import type { LogSignals } from './signals.ts';

/** Rows per INSERT: 100 records (the request bound, decisions row 87) in one statement. */
const INSERT_CHUNK = 100;

interface StreamRow {
  readonly head: number;
  readonly final: number | null;
  readonly lastAt: number;
}

export class TransactionAppender {
  readonly #driver: SqlDriver;
  readonly #signals: LogSignals;
  readonly #clock: Clock;

  constructor(driver: SqlDriver, signals: LogSignals, clock: Clock) {
    this.#driver = driver;
    this.#signals = signals;
    this.#clock = clock;
  }

  /** Lands a group of batches, on any streams, in one transaction; one outcome each. */
  appendGroup(batches: readonly AppendBatch[]): Promise<ItemOutcome<AppendResult>[]> {
    return this.#driver.transaction(async (tx) => {
      const states = new Map<string, { start: number; now: StreamRow }>();
      const answers: ItemOutcome<AppendResult>[] = [];
      for (const batch of batches) {
        let state = states.get(batch.stream);
        if (state === undefined) {
          const locked = await this.#lock(tx, batch.stream);
          state = { start: locked.head, now: locked };
          states.set(batch.stream, state);
        }
        const answer = await this.#appendOne(tx, state.now, batch);
        const last =
          answer.ok && answer.value.outcome === 'landed' ? answer.value.records.at(-1) : undefined;
        if (last !== undefined) {
          state.now = { head: last.envelope.cursor, final: null, lastAt: last.envelope.at };
        }
        answers.push(answer);
      }
      // One signal per stream: other instances read up to the head it names.
      for (const [stream, { start, now }] of states) {
        if (now.head > start) await this.#signals.publish(tx, stream, now.head);
      }
      return answers;
    });
  }

  /** Lands `record` as the stream's final one, or answers the final record it has. */
  archive(
    stream: string,
    record: PendingRecord,
  ): Promise<{ final: StoredRecord; landed: boolean }> {
    return this.#driver.transaction(async (tx) => {
      const state = await this.#lock(tx, stream);
      if (state.final !== null) {
        const [existing] = await readRange(tx, stream, { from: state.final, to: state.final + 1 });
        if (existing === undefined) throw new Error(`stream ${stream} lost its final record`);
        return { final: existing, landed: false };
      }
      const [archived] = await this.#land(tx, stream, state, [record], true);
      if (archived === undefined) throw new Error('the archiving record did not land');
      await this.#signals.publish(tx, stream, archived.envelope.cursor);
      return { final: archived, landed: true };
    });
  }

  /** One batch of a group, on the stream's locked row as the group's earlier batches left it. */
  async #appendOne(
    tx: SqlQueryable,
    state: StreamRow,
    batch: AppendBatch,
  ): Promise<ItemOutcome<AppendResult>> {
    // The key first (decisions row 9): an identical resend replays even after archiving.
    if (batch.key !== null) {
      const [held] = await tx.query(
        'SELECT fingerprint, first_cursor, last_cursor FROM idempotency WHERE stream = ? AND key = ?',
        [batch.stream, batch.key],
      );
      if (held !== undefined) {
        if (text(held, 'fingerprint') !== batch.fingerprint) {
          return { ok: false, error: refusalError('idempotency_conflict') };
        }
        const range = { from: int(held, 'first_cursor'), to: int(held, 'last_cursor') + 1 };
        const records = await readRange(tx, batch.stream, range);
        return { ok: true, value: { outcome: 'replayed', records } };
      }
    }
    if (state.final !== null) return { ok: false, error: refusalError('session_archived') };
    const records = await this.#land(tx, batch.stream, state, batch.records, false);
    if (batch.key !== null) {
      await tx.query(
        'INSERT INTO idempotency (stream, key, fingerprint, first_cursor, last_cursor) VALUES (?, ?, ?, ?, ?)',
        [batch.stream, batch.key, batch.fingerprint, state.head + 1, state.head + records.length],
      );
    }
    return { ok: true, value: { outcome: 'landed', records } };
  }

  /** Locks the stream's row for this transaction, creating it at head 0 on first use. */
  async #lock(tx: SqlQueryable, stream: string): Promise<StreamRow> {
    const select = `SELECT head, final_cursor, last_at FROM streams WHERE stream = ?${this.#driver.dialect.lockRows}`;
    let [row] = await tx.query(select, [stream]);
    if (row === undefined) {
      await tx.query(
        'INSERT INTO streams (stream, head, final_cursor, last_at, created) VALUES (?, 0, NULL, 0, ?) ON CONFLICT (stream) DO NOTHING',
        [stream, this.#clock.now()],
      );
      [row] = await tx.query(select, [stream]);
      if (row === undefined) throw new Error(`stream ${stream} could not be created`);
    }
    const final = row.final_cursor;
    return {
      head: int(row, 'head'),
      final: final === null ? null : int(row, 'final_cursor'),
      lastAt: int(row, 'last_at'),
    };
  }

  /** Mints cursors and one `at` for `pending`, inserts them and moves the head. */
  async #land(
    tx: SqlQueryable,
    stream: string,
    state: StreamRow,
    pending: readonly PendingRecord[],
    archiving: boolean,
  ): Promise<StoredRecord[]> {
    const at = Math.max(this.#clock.now(), state.lastAt);
    const records = stamp(stream, state.head + 1, at, pending);
    const head = state.head + records.length;
    await tx.query('UPDATE streams SET head = ?, last_at = ?, final_cursor = ? WHERE stream = ?', [
      head,
      at,
      archiving ? head : null,
      stream,
    ]);
    for (let start = 0; start < records.length; start += INSERT_CHUNK) {
      const chunk = records.slice(start, start + INSERT_CHUNK);
      const params = chunk.flatMap(({ envelope: e, body }) => [
        e.stream,
        e.cursor,
        e.at,
        e.kind.name,
        e.kind.version,
        e.producer,
        e.to,
        e.idem,
        e.size,
        body,
      ]);
      await tx.query(
        `INSERT INTO records (${COLUMNS}) VALUES ${valuesList(chunk.length, 10)}`,
        params,
      );
    }
    return records;
  }
}
