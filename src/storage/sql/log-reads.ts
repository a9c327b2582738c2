/**
 * The read queries of the SQL log store, shared by `read`, `readByKey`, the tails and the
 * stream feeds (interface 2.3, 4.2).
 *
 * A tail or feed reads with `readPage`: the records from a cursor on together with the
 * stream's head and final cursor, in one statement and so at one snapshot on both
 * engines. One query thus tells a tail both what to yield and whether it has caught up
 * or reached the archiving record; it never needs a second query for the head.
 *
 * A record that just landed is not read back: `stamp` makes its stored form from what
 * was appended and the cursor and `at` minted for it.
 */
import type { PendingRecord, ReadRange, StoredRecord } from '../log-store.ts';
import { int, text, textOrNull, type SqlQueryable, type SqlRow } from './driver.ts';

/** One read of a stream: its records from a cursor on, and the stream row at the same snapshot. */
export interface LogPage {
  readonly records: readonly StoredRecord[];
  /** The stream's head; 0 for a stream with no record. */
  readonly head: number;
  /** The archiving record's cursor, or null while the stream is open. */
  readonly final: number | null;
}

/** The columns of a record row, in the order the store inserts them. */
export const COLUMNS =
  'stream, cursor, at, kind_name, kind_version, producer, addressed_to, idem, size, body';

/** The same columns taken from `records r` in a join, under their own names. */
const JOINED = COLUMNS.split(', ')
  .map((column) => `r.${column} AS ${column}`)
  .join(', ');

export function toStored(row: SqlRow): StoredRecord {
  return {
    envelope: {
      at: int(row, 'at'),
      cursor: int(row, 'cursor'),
      idem: textOrNull(row, 'idem'),
      kind: { name: text(row, 'kind_name'), version: int(row, 'kind_version') },
      producer: text(row, 'producer'),
      size: int(row, 'size'),
      stream: text(row, 'stream'),
      to: textOrNull(row, 'addressed_to'),
    },
    body: text(row, 'body'),
  };
}

/** The stored form of `pending` landing at `first …` with one `at`. */
export function stamp(
  stream: string,
  first: number,
  at: number,
  pending: readonly PendingRecord[],
): StoredRecord[] {
  return pending.map((record, i): StoredRecord => {
    const { body } = record;
    return {
      envelope: {
        at,
        cursor: first + i,
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
}

/** The records of a cursor range, in cursor order. */
export async function readRange(
  on: SqlQueryable,
  stream: string,
  range: ReadRange,
): Promise<StoredRecord[]> {
  if (range.limit !== undefined && range.limit <= 0) return [];
  const params: (string | number)[] = [stream, Math.max(1, range.from)];
  let sql = `SELECT ${COLUMNS} FROM records WHERE stream = ? AND cursor >= ?`;
  if (range.to !== undefined) {
    sql += ' AND cursor < ?';
    params.push(range.to);
  }
  sql += ' ORDER BY cursor';
  if (range.limit !== undefined) {
    sql += ' LIMIT ?';
    params.push(range.limit);
  }
  return (await on.query(sql, params)).map(toStored);
}

/**
 * At most `limit` records from `from` (before `to` when given) with the stream's head and
 * final cursor. The stream row drives a LEFT JOIN, so a page without records still
 * answers the head; a stream that never landed anything answers head 0.
 */
export async function readPage(
  on: SqlQueryable,
  stream: string,
  from: number,
  to: number | undefined,
  limit: number,
): Promise<LogPage> {
  const params: (string | number)[] = [Math.max(1, from)];
  let sql = `SELECT s.head AS stream_head, s.final_cursor AS final_cursor, ${JOINED} FROM streams s LEFT JOIN records r ON r.stream = s.stream AND r.cursor >= ?`;
  if (to !== undefined) {
    sql += ' AND r.cursor < ?';
    params.push(to);
  }
  sql += ' WHERE s.stream = ? ORDER BY r.cursor LIMIT ?';
  params.push(stream, Math.max(1, limit));
  const rows = await on.query(sql, params);
  const [first] = rows;
  if (first === undefined) return { records: [], head: 0, final: null };
  return {
    records: first.cursor === null ? [] : rows.map(toStored),
    head: int(first, 'stream_head'),
    final: first.final_cursor === null ? null : int(first, 'final_cursor'),
  };
}
