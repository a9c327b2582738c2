/**
 * A record as the `log_append` procedure takes it and, after it landed, as the procedure's
 * notification gives it back (migration 006): `[kind_name, kind_version, producer, to,
 * idem, size, body]`. A notification adds what the procedure minted once for all the
 * records it carries of a stream, their `at` and the head they end at, from which the
 * listener stamps them as an append does (`stamp`, `append-transaction.ts`).
 */
import type { PendingRecord } from '../log-store.ts';

export type RecordTuple = readonly [
  string,
  number,
  string,
  string | null,
  string | null,
  number,
  string,
];

export function recordTuple(record: PendingRecord): RecordTuple {
  return [
    record.kind.name,
    record.kind.version,
    record.producer,
    record.to,
    record.idem,
    Buffer.byteLength(record.body),
    record.body,
  ];
}

const textOrNull = (value: unknown): value is string | null =>
  value === null || typeof value === 'string';

function isRecordTuple(value: unknown): value is RecordTuple {
  return (
    Array.isArray(value) &&
    value.length === 7 &&
    typeof value[0] === 'string' &&
    Number.isSafeInteger(value[1]) &&
    typeof value[2] === 'string' &&
    textOrNull(value[3]) &&
    textOrNull(value[4]) &&
    Number.isSafeInteger(value[5]) &&
    typeof value[6] === 'string'
  );
}

/** The record a tuple stands for; throws a TypeError for anything else. */
export function pendingFromTuple(tuple: unknown): PendingRecord {
  if (!isRecordTuple(tuple)) throw new TypeError('a record tuple of another shape');
  const [name, version, producer, to, idem, , body] = tuple;
  return { kind: { name, version }, producer, to, idem, body };
}
