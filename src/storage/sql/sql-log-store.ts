/**
 * The log store on SQL (interface 2.2 to 2.4, 3.1; decisions rows 9, 12, 13), one code
 * path for SQLite and PostgreSQL behind `SqlDriver`, except for how a group of appends
 * is written.
 *
 * Appends go through group commit across streams (`group-runner.ts`): the appends that
 * arrive while others are being written go together in the next write, each still
 * answered on its own. On PostgreSQL a group is one call of the `log_append` procedure,
 * one round trip (`append-postgres.ts`); on SQLite, where statements cost no round trip,
 * it is one transaction of plain statements (`append-transaction.ts`). Either way the
 * stream's row lock serialises its writers across connections and processes, so
 * cursors have no gap and no duplicate, and a group lands whole or not at all. Archiving
 * is a transaction on both engines. After commit the landed records go to this
 * instance's tails (`stream-fanout.ts`); other instances hear of them through
 * `signals.ts`.
 */
import type { Clock } from '../../clock.ts';
import { InvalidRequest, Unavailable } from '../../errors.ts';
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
import { appendPostgres, isolatesPostgres } from './append-postgres.ts';
import { TransactionAppender } from './append-transaction.ts';
import { int, type SqlDriver } from './driver.ts';
import { GroupRunner, type ItemOutcome } from './group-runner.ts';
import { readPage, readRange } from './log-reads.ts';
import type { LogSignals } from './signals.ts';
import { StreamFanout } from './stream-fanout.ts';
import { sqlTail } from './tail.ts';
import type { Wakeups } from './wakeups.ts';

/**
 * PostgreSQL groups in flight at once: while one commits and flushes, the next is formed
 * and sent, and the two commits may share a flush. More only split the waiting appends
 * into smaller groups (measured with `npm run bench:log`).
 */
const POSTGRES_GROUPS = 2;
/** Records per group at most: a call's JSON stays around a megabyte. */
const GROUP_RECORDS = 1000;

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
  readonly #transactions: TransactionAppender;
  readonly #closed = new AbortController();
  readonly #appends: GroupRunner<AppendBatch, AppendResult>;
  readonly #tail: ReturnType<typeof sqlTail>;
  #closing: Promise<void> | undefined;

  constructor(parts: SqlLogStoreParts) {
    const { driver, signals, clock } = parts;
    this.backend = driver.dialect.name;
    this.#driver = driver;
    this.#signals = signals;
    this.#transactions = new TransactionAppender(driver, signals, clock);
    // Tails share one reader per stream: see `stream-fanout.ts`.
    this.#fanout = new StreamFanout({
      wakeups: parts.wakeups,
      read: (stream, from, limit) => readPage(driver, stream, from, undefined, limit),
      capacity: parts.tailBuffer ?? 1024,
    });
    this.#tail = sqlTail({
      page: (name, from, to, limit) => readPage(driver, name, from, to, limit),
      fanout: this.#fanout,
      closed: this.#closed.signal,
    });
    const { channel } = signals;
    const write =
      channel === null
        ? (batches: readonly AppendBatch[]) => this.#transactions.appendGroup(batches)
        : (batches: readonly AppendBatch[]) => appendPostgres(driver, clock, channel, batches);
    this.#appends = new GroupRunner({
      run: async (batches) => this.#landed(await write(batches)),
      keyOf: (batch) => batch.stream,
      concurrency: channel === null ? 1 : POSTGRES_GROUPS,
      maxWeight: GROUP_RECORDS,
      weightOf: (batch) => batch.records.length,
      // SQLite rolls a failed group back whole; only a lost database is worth no retry.
      isolates: channel === null ? (error) => !(error instanceof Unavailable) : isolatesPostgres,
    });
  }

  append(batch: AppendBatch): Promise<AppendResult> {
    if (batch.records.length === 0) {
      return Promise.reject(new InvalidRequest('empty_batch', 'a batch holds at least one record'));
    }
    return this.#appends.submit(batch);
  }

  /** After commit, in cursor order: the fan-out hands them to this instance's tails. */
  #landed(outcomes: ItemOutcome<AppendResult>[]): ItemOutcome<AppendResult>[] {
    let landed = false;
    for (const outcome of outcomes) {
      if (outcome.ok && outcome.value.outcome === 'landed') {
        const { records } = outcome.value;
        const stream = records[0]?.envelope.stream;
        if (stream !== undefined) this.#fanout.offer(stream, records, false);
        landed = true;
      }
    }
    if (landed) this.#signals.committed();
    return outcomes;
  }

  async archive(stream: string, record: PendingRecord): Promise<StoredRecord> {
    const { final, landed } = await this.#transactions.archive(stream, record);
    if (landed) {
      this.#fanout.offer(stream, [final], true);
      this.#signals.committed();
    }
    return final;
  }

  read(stream: string, range: ReadRange): Promise<StoredRecord[]> {
    return readRange(this.#driver, stream, range);
  }

  tail(stream: string, options: TailOptions): AsyncIterable<StoredRecord> {
    return this.#tail(stream, options);
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
}
