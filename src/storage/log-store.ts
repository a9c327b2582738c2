/**
 * The log store port: the append-only record of a session (interface 2.2 to 2.4, 3.1).
 *
 * A stream is one session's log. Cursors start at 1 and grow by one per record with no
 * gap and no duplicate; `at` is minted with the cursor in the same atomic step. Backends
 * (SQLite, PostgreSQL, Redis Streams) implement exactly this interface and pass the one
 * conformance suite in `test/contracts/log-store.contract.ts`. Nothing of a client,
 * connection or transaction leaks through it.
 */
import type { Envelope, Kind } from '../schemas/records.ts';

/**
 * A record ready to land: everything of the envelope except what the store mints
 * (`at`, `cursor`) and what the stream implies (`stream`). `body` is the canonical
 * JSON text of the stored body; `size` is its length in bytes (decisions row 12).
 */
export interface PendingRecord {
  readonly kind: Kind;
  readonly producer: string;
  readonly to: string | null;
  readonly idem: string | null;
  readonly body: string;
}

/** A landed record as stored: the envelope and the body's JSON text, unparsed. */
export interface StoredRecord {
  readonly envelope: Envelope;
  readonly body: string;
}

/** A batch to append atomically. */
export interface AppendBatch {
  readonly stream: string;
  readonly records: readonly PendingRecord[];
  /**
   * The batch's idempotency key (decisions row 9), or null for a one-off write. A key
   * holds one batch per stream: an identical resend answers the original records.
   */
  readonly key: string | null;
  /**
   * A digest of what the caller offered under `key`; a resend with another fingerprint
   * is refused with `idempotency_conflict`. Ignored when `key` is null.
   */
  readonly fingerprint: string;
}

/** What an append did. */
export interface AppendResult {
  /** `landed`: new records were minted; `replayed`: the key already held this batch. */
  readonly outcome: 'landed' | 'replayed';
  readonly records: readonly StoredRecord[];
}

/** The tip of a stream. */
export interface StreamHead {
  /** The last landed cursor; 0 for a stream with no record. */
  readonly head: number;
  readonly archived: boolean;
}

export interface ReadRange {
  /** First cursor to read, inclusive (cursors start at 1; 0 reads from the start). */
  readonly from: number;
  /** Cursor to stop before (exclusive); absent reads to the head. */
  readonly to?: number;
  /** At most this many records. */
  readonly limit?: number;
}

export interface TailOptions {
  readonly from: number;
  /** Cursor to stop before: the tail ends once `to - 1` has been delivered. */
  readonly to?: number;
  /** Ends the tail; the iterator then returns without error. */
  readonly signal?: AbortSignal;
  /**
   * A synchronous way past the iterator, for fan-out: while the iterator's consumer waits
   * for its next record, the store may offer that record here instead, as it lands, in
   * cursor order. `true` takes it (the iterator goes on after it and never yields it);
   * `false` leaves it, and every later record, to the iterator. The archiving record and
   * the one before `to` always come through the iterator, which then ends.
   */
  readonly deliver?: (record: StoredRecord) => boolean;
}

/**
 * The log store. Errors are `ServiceError`s from `src/errors.ts`:
 * `Conflict('session_archived')` for an append to an archived stream and
 * `Conflict('idempotency_conflict')` for a key that holds a different batch.
 */
export interface LogStore {
  /** Which backend this is, for health answers and logs (`sqlite`, `postgres`, `redis`). */
  readonly backend: string;

  /**
   * Appends a batch atomically: checks the key, refuses an archived stream, mints the
   * cursors and one `at` for the whole batch, and lands every record or none. A stream
   * comes into being with its first append.
   */
  append(batch: AppendBatch): Promise<AppendResult>;

  /**
   * Lands `record` as the stream's final record and archives the stream in the same
   * atomic step. Archiving an archived stream lands nothing and answers its final record.
   */
  archive(stream: string, record: PendingRecord): Promise<StoredRecord>;

  /** The records of a cursor range, in cursor order. */
  read(stream: string, range: ReadRange): Promise<StoredRecord[]>;

  /**
   * Follows the stream from `from`: yields every landed record once, in cursor order,
   * waits for new ones, and ends after the archiving record, on `to`, or on abort.
   */
  tail(stream: string, options: TailOptions): AsyncIterable<StoredRecord>;

  /** The stream's head, or null when nothing has landed on it. */
  head(stream: string): Promise<StreamHead | null>;

  /** The records the key landed, or null when the key holds nothing on this stream. */
  readByKey(stream: string, key: string): Promise<StoredRecord[] | null>;

  /** Resolves when the backend answers; rejects naming what failed. */
  ping(): Promise<void>;

  /** Ends every open tail and releases connections. */
  close(): Promise<void>;
}
