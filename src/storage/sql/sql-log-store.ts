/**
 * The log store on SQL (interface 2.2 to 2.4, 3.1; decisions rows 9, 12, 13), one code
 * path for SQLite and PostgreSQL behind `SqlDriver`.
 *
 * An append is one transaction: lock the stream's row (created on first use), check the
 * idempotency key, refuse an archived stream, mint `head + 1 …` and one `at`, insert every
 * record, move `head`, record the key, signal the tails. The row lock serialises every
 * writer of a stream across connections and processes, so cursors have no gap and no
 * duplicate, and a batch lands whole or is rolled back whole. Within a process, appends
 * to a stream that arrive while its transaction runs land together in the next one
 * (group commit, `group-runner.ts`), each batch still checked on its own.
 *
 * `at` comes from the injected clock on both engines, read after the row lock is held
 * and never below the stream's previous `at`: tests can freeze it, and it cannot go back
 * along a stream even across hosts whose clocks disagree a little.
 */
import type { Clock } from '../../clock.ts';
import { InvalidRequest } from '../../errors.ts';
import { refusalError } from '../outcomes.ts';
import type {
  AppendBatch,
  AppendResult,
  LogStore,
  PendingRecord,
  ReadRange,
  StoredRecord,
  StreamHead,
  TailOptions,
} from '../log-store.ts';
import { int, text, valuesList, type SqlDriver, type SqlQueryable } from './driver.ts';
import { GroupRunner, type ItemOutcome } from './group-runner.ts';
import { COLUMNS, readPage, readRange } from './log-reads.ts';
import type { LogSignals } from './signals.ts';
import { StreamFanout } from './stream-fanout.ts';
import { follow, type TailSource } from './tail.ts';
import type { Wakeups } from './wakeups.ts';

/** Rows per INSERT: 100 records (the request bound, decisions row 87) in one statement. */
const INSERT_CHUNK = 100;

interface StreamRow {
  readonly head: number;
  readonly final: number | null;
  readonly lastAt: number;
}

export interface SqlLogStoreParts {
  readonly driver: SqlDriver;
  readonly wakeups: Wakeups;
  readonly signals: LogSignals;
  readonly clock: Clock;
  /** Records a tail may have buffered before it reads the log itself; 1024 by default. */
  readonly tailBuffer?: number;
}

export class SqlLogStore implements LogStore {
  readonly backend: string;
  readonly #driver: SqlDriver;
  readonly #fanout: StreamFanout;
  readonly #signals: LogSignals;
  readonly #clock: Clock;
  readonly #closed = new AbortController();
  /** Appends to one stream that queue while its transaction runs land as one group. */
  readonly #appends = new GroupRunner<AppendBatch, AppendResult>((stream, batches) =>
    this.#appendGroup(stream, batches),
  );
  #closing: Promise<void> | undefined;

  constructor(parts: SqlLogStoreParts) {
    this.backend = parts.driver.dialect.name;
    this.#driver = parts.driver;
    this.#signals = parts.signals;
    // Tails share one reader per stream (issue 3, item 7): see `stream-fanout.ts`.
    this.#fanout = new StreamFanout({
      wakeups: parts.wakeups,
      read: (stream, from, limit) => readPage(this.#driver, stream, from, undefined, limit),
      capacity: parts.tailBuffer ?? 1024,
    });
    this.#clock = parts.clock;
  }

  append(batch: AppendBatch): Promise<AppendResult> {
    if (batch.records.length === 0) {
      return Promise.reject(new InvalidRequest('empty_batch', 'a batch holds at least one record'));
    }
    return this.#appends.submit(batch.stream, batch);
  }

  /**
   * Lands a group of batches on one stream in one transaction (`GroupRunner`): each
   * batch in turn, with its own key and archive checks, so a batch refused answers its
   * refusal and the others land; the stream's row is locked once and the group commits
   * once.
   */
  async #appendGroup(
    stream: string,
    batches: readonly AppendBatch[],
  ): Promise<ItemOutcome<AppendResult>[]> {
    const outcomes = await this.#driver.transaction(async (tx) => {
      let state = await this.#lock(tx, stream);
      const answers: ItemOutcome<AppendResult>[] = [];
      const start = state.head;
      for (const batch of batches) {
        const answer = await this.#appendOne(tx, state, batch);
        if (answer.ok && answer.value.outcome === 'landed') {
          const last = answer.value.records.at(-1)?.envelope;
          if (last !== undefined) state = { head: last.cursor, final: null, lastAt: last.at };
        }
        answers.push(answer);
      }
      // One signal for the group: other instances read up to the head it names.
      if (state.head > start) await this.#signals.publish(tx, stream, state.head);
      return answers;
    });
    // After commit, in cursor order: the fan-out hands them to this instance's tails.
    for (const outcome of outcomes) {
      if (outcome.ok && outcome.value.outcome === 'landed') {
        this.#fanout.offer(stream, outcome.value.records, false);
      }
    }
    return outcomes;
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

  async archive(stream: string, record: PendingRecord): Promise<StoredRecord> {
    const { final, landed } = await this.#driver.transaction(async (tx) => {
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
    if (landed) this.#fanout.offer(stream, [final], true);
    return final;
  }

  read(stream: string, range: ReadRange): Promise<StoredRecord[]> {
    return readRange(this.#driver, stream, range);
  }

  tail(stream: string, options: TailOptions): AsyncIterable<StoredRecord> {
    const source: TailSource = {
      page: (name, from, to, limit) => readPage(this.#driver, name, from, to, limit),
      fanout: this.#fanout,
      closed: this.#closed.signal,
    };
    return follow(source, stream, options);
  }

  async head(stream: string): Promise<StreamHead | null> {
    const [row] = await this.#driver.query(
      'SELECT head, final_cursor FROM streams WHERE stream = ?',
      [stream],
    );
    return row === undefined
      ? null
      : { head: int(row, 'head'), archived: row.final_cursor !== null };
  }

  async readByKey(stream: string, key: string): Promise<StoredRecord[] | null> {
    const [held] = await this.#driver.query(
      'SELECT first_cursor, last_cursor FROM idempotency WHERE stream = ? AND key = ?',
      [stream, key],
    );
    if (held === undefined) return null;
    return readRange(this.#driver, stream, {
      from: int(held, 'first_cursor'),
      to: int(held, 'last_cursor') + 1,
    });
  }

  async ping(): Promise<void> {
    await this.#driver.query('SELECT 1 AS ok');
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed.abort();
      this.#fanout.close();
      await this.#signals.close();
      await this.#driver.close();
    })();
    return this.#closing;
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

  /**
   * Mints cursors and one `at` for `pending`, inserts them and moves the head; the
   * caller signals other instances once for what it landed.
   */
  async #land(
    tx: SqlQueryable,
    stream: string,
    state: StreamRow,
    pending: readonly PendingRecord[],
    archiving: boolean,
  ): Promise<StoredRecord[]> {
    const at = Math.max(this.#clock.now(), state.lastAt);
    const records = pending.map((record, i): StoredRecord => {
      const { body } = record;
      return {
        envelope: {
          at,
          cursor: state.head + 1 + i,
          idem: record.idem,
          kind: { name: record.kind.name, version: record.kind.version },
          producer: record.producer,
          size: Buffer.byteLength(body),
          stream,
          to: record.to,
        },
        body,
      };
    });
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
