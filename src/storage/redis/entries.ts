/**
 * Stream entries to and from records: the ARGV a script takes for a pending record and
 * the `StoredRecord` an XRANGE or XREAD entry stands for (interface 2.2, 2.3).
 */
import type { PendingRecord, StoredRecord } from '../log-store.ts';
import { isIndexedSlot } from '../../schemas/idem-slots.ts';
import type { Kind } from '../../schemas/records.ts';
import { cursorOf, FIELD } from './keys.ts';

/** An entry as XRANGE, XREAD and the scripts answer it: id and flat field/value list. */
export type RawEntry = [id: string, fields: string[]];

/** A parsed entry: the record, and whether it is the stream's archiving record. */
export interface LogEntry {
  readonly record: StoredRecord;
  readonly final: boolean;
}

/** The text of a kind in an entry and in the scripts' ARGV: `<name>@<version>`. */
export function kindField(kind: Kind): string {
  return `${kind.name}@${String(kind.version)}`;
}

/** The kind a `kindField` text stands for. */
function parseKind(text: string, id: string): Kind {
  const at = text.lastIndexOf('@');
  const version = Number(text.slice(at + 1));
  if (at < 1 || !Number.isSafeInteger(version)) {
    throw new Error(`log entry ${id} has the kind ${JSON.stringify(text)}, not <name>@<version>`);
  }
  return { name: text.slice(0, at), version };
}

/** Appends the ARGV slots of one pending record to `args`; the order is the scripts' header. */
export function pushRecordArgs(args: string[], record: PendingRecord): void {
  args.push(
    kindField(record.kind),
    record.producer,
    nullable(record.to),
    nullable(record.idem),
    record.body,
  );
}

/**
 * Appends the ARGV slots of a batch's records to `args`, in one of the two forms
 * `append-3.lua`'s header lists. Most batches are a client's: one producer, no `to`, the
 * idem slots `<key>:0`, `<key>:1`, ... (the write filter holds them to that), and mostly
 * one kind. Those go in the shared form, which names what the records share once and
 * then gives each record its body (and its kind, when kinds differ): on a batch of 100,
 * some 100 slots instead of 500, each of which ioredis writes into the command's text and
 * Redis parses again. Any other batch goes record by record, five slots each.
 */
export function pushBatchArgs(args: string[], records: readonly PendingRecord[]): void {
  const first = records[0];
  const prefix = first === undefined ? undefined : sharedIdemPrefix(records, first);
  if (first === undefined || prefix === undefined) {
    args.push('r');
    for (const record of records) pushRecordArgs(args, record);
    return;
  }
  const kind = kindField(first.kind);
  const oneKind = records.every(
    (record) => record.kind.name === first.kind.name && record.kind.version === first.kind.version,
  );
  args.push('s', first.producer, nullable(first.to), nullable(prefix), oneKind ? `+${kind}` : '-');
  for (const record of records) {
    if (!oneKind) args.push(kindField(record.kind));
    args.push(record.body);
  }
}

/**
 * The idem prefix the batch's records share, as the shared form names it: null when none
 * has an idem slot, `<prefix>` when record i has `<prefix>i`; undefined when they do not
 * share one, or a producer, or a `to`.
 */
function sharedIdemPrefix(
  records: readonly PendingRecord[],
  first: PendingRecord,
): string | null | undefined {
  const idem = first.idem;
  if (idem !== null && !idem.endsWith('0')) return undefined;
  const prefix = idem === null ? null : idem.slice(0, -1);
  for (let index = 0; index < records.length; index++) {
    const record = records[index];
    if (record?.producer !== first.producer || record.to !== first.to) return undefined;
    if (prefix === null ? record.idem !== null : !isIndexedSlot(record.idem, prefix, index)) {
      return undefined;
    }
  }
  return prefix;
}

/** Nullable strings cross into Lua as `-` for null and `+<value>` otherwise. */
export function nullable(value: string | null): string {
  return value === null ? '-' : `+${value}`;
}

/** The landed record of a pending one, minted at `cursor` and `at` on `stream`. */
export function landed(
  stream: string,
  record: PendingRecord,
  cursor: number,
  at: number,
): StoredRecord {
  return {
    envelope: {
      at,
      cursor,
      idem: record.idem,
      kind: { name: record.kind.name, version: record.kind.version },
      producer: record.producer,
      size: Buffer.byteLength(record.body, 'utf8'),
      stream,
      to: record.to,
    },
    body: record.body,
  };
}

/** Parses one entry of `stream`; throws when a field the scripts always write is missing. */
export function parseEntry(stream: string, [id, fields]: RawEntry): LogEntry {
  const values = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const [field, value] = [fields[i], fields[i + 1]];
    if (field !== undefined && value !== undefined) values.set(field, value);
  }
  const required = (field: string): string => {
    const value = values.get(field);
    if (value === undefined) throw new Error(`log entry ${id} of ${stream} has no field ${field}`);
    return value;
  };
  const body = required(FIELD.body);
  return {
    record: {
      envelope: {
        at: Number(required(FIELD.at)),
        cursor: cursorOf(id),
        idem: values.get(FIELD.idem) ?? null,
        kind: parseKind(required(FIELD.kind), id),
        producer: required(FIELD.producer),
        size: Buffer.byteLength(body, 'utf8'),
        stream,
        to: values.get(FIELD.to) ?? null,
      },
      body,
    },
    final: values.has(FIELD.final),
  };
}

/** Parses a list of entries, in the order given (cursor order for XRANGE and XREAD). */
export function parseEntries(stream: string, entries: readonly RawEntry[]): LogEntry[] {
  return entries.map((entry) => parseEntry(stream, entry));
}
