/**
 * The intake of `POST /sessions/{id}/events` (interface 2.2 to 2.4, 4.2; decisions rows 8,
 * 9, 11 to 15, 85, 87, part D): stamps the offered records from the credential, runs the
 * write filter, checks registered kinds' bodies, fixes each body's canonical text and
 * size, and lands the batch in one log-store append.
 *
 * Two steps, so the route can keep the order of row 83 (syntax 400, 401, 403, 404,
 * semantic 400, 409): `admitRecords` stamps and filters (403 `filter_refused`) without
 * the session; `landRecords`, once the session is known to exist, checks registered
 * kinds' bodies (semantic 400) and body sizes (413), then appends. The store alone
 * decides idempotency (`replayed`, 409 `idempotency_conflict`) and archiving (409
 * `session_archived`), atomically with the cursor mint, so no read before the append can
 * race another writer.
 *
 * Sealing seam (part D): call `args` and completion `result` are stored sealed. Clients
 * land only message.submitted and turn.cancel today, which carry nothing sealed; once
 * grants complete calls here, `prepareAppend`'s `seal` (from `src/sessions/sealing.ts`) turns
 * a parsed body into its stored form before the canonical text and size are fixed.
 */
import { hash } from 'node:crypto';
import { Forbidden, InvalidRequest, PayloadTooLarge } from '../errors.ts';
import { toFieldErrors } from '../schemas/issues.ts';
import type { FieldError } from '../schemas/problem.ts';
import { bodySchemaFor } from '../schemas/record-kinds.ts';
import { canonicalJson, sameJson } from './canonical-json.ts';
import {
  MAX_RECORD_BODY_BYTES,
  MAX_RECORDS_PER_APPEND,
  type Envelope,
  type Kind,
  type OfferedRecord,
} from '../schemas/records.ts';
import type { AppendBatch, LogStore, PendingRecord } from '../storage/log-store.ts';
import {
  completionIdem,
  filterBatch,
  holderIdem,
  type OfferedEnvelope,
  type WriterCredential,
} from './write-filter.ts';

/** Turns a parsed body into the form that is stored (part D sealing). */
export type BodySealer = (kind: Kind, body: unknown) => unknown;

/** What landed, or what an identical resend answers (row 9). */
export interface AppendOutcome {
  readonly outcome: 'landed' | 'replayed';
  readonly envelopes: readonly Envelope[];
}

/**
 * Row 87: more than 100 records is a 413. Checked by the route before the credential, as
 * the bound on the request's size.
 */
export function checkBatchSize(offered: readonly OfferedRecord[]): void {
  if (offered.length > MAX_RECORDS_PER_APPEND) {
    throw new PayloadTooLarge(
      'too_many_records',
      `an append holds at most ${MAX_RECORDS_PER_APPEND} records, not ${offered.length}`,
      { field: 'body', reason: `must hold at most ${MAX_RECORDS_PER_APPEND} records` },
    );
  }
}

/** RFC 8785 text of a JSON value, or a 400 naming `field` when it has none. */
function canonicalText(value: unknown, field: string): string {
  let text: string | undefined;
  try {
    text = canonicalJson(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) {
    throw new InvalidRequest('invalid_request', `${field} has no canonical JSON form`, {
      field,
      reason: 'has no canonical JSON form (RFC 8785)',
    });
  }
  return text;
}

/**
 * Row 9: the fingerprint of what was offered: SHA-256 of the batch's canonical JSON.
 *
 * Written record by record rather than by canonicalizing the whole batch, which on
 * batches of 100 was the dearest step of an append (`npm run bench`): an offered record
 * is exactly `{kind, body}` (`OfferedRecord` is strict), so its canonical form is
 * `{"body":<body>,"kind":<kind>}` (keys in code-unit order), a batch's is its records'
 * joined in `[…]`, and `bodies[i]`, when given, is the canonical text of record i's body
 * already made for storage. Anything else takes the general path; the digest is the
 * same either way (a property test holds it to the whole-batch one).
 */
export function batchFingerprint(
  offered: readonly OfferedRecord[],
  bodies: readonly (string | undefined)[] = [],
): string {
  // A batch mostly repeats one kind: its text is made again only when the kind changes.
  let last: { name: string; version: number; text: string } | undefined;
  const kindText = (kind: Kind): string => {
    if (!hasOnly(kind, 'name', 'version')) return canonicalText(kind, 'body');
    if (last?.name !== kind.name || last.version !== kind.version) {
      last = { name: kind.name, version: kind.version, text: canonicalText(kind, 'body') };
    }
    return last.text;
  };
  const parts = offered.map((record, index) => {
    if (record.body === undefined || !hasOnly(record, 'body', 'kind')) {
      return canonicalText(record, 'body');
    }
    const body = bodies[index] ?? canonicalText(record.body, 'body');
    return `{"body":${body},"kind":${kindText(record.kind)}}`;
  });
  // The brackets go on the end parts, so that `join` makes the whole text as one flat
  // string: a text made by joining and then wrapping is a tree that the digest copies
  // flat again (25 KB a batch of 100). One-shot: the same digest as a Hash object's,
  // without making one per append.
  const end = parts.length - 1;
  if (end < 0) return hash('sha256', '[]', 'hex');
  parts[0] = `[${parts[0] ?? ''}`;
  parts[end] = `${parts[end] ?? ''}]`;
  return hash('sha256', parts.join(','), 'hex');
}

/** True when the enumerable own keys of `value` are exactly `a` and `b`. */
function hasOnly(value: object, a: string, b: string): boolean {
  // Counted with for…in, not Object.keys: no array per record of a batch.
  let count = 0;
  for (const key in value) {
    if (key !== a && key !== b) return false;
    count += 1;
  }
  return count === 2 && Object.hasOwn(value, a) && Object.hasOwn(value, b);
}

/** Row 14: registered kinds' bodies parsed by their schema; others kept as offered. */
function parsedBodies(offered: readonly OfferedRecord[]): unknown[] {
  const errors: FieldError[] = [];
  const bodies = offered.map((record, index) => {
    const schema = bodySchemaFor(record.kind);
    if (schema === undefined) return record.body;
    const result = schema.safeParse(record.body);
    if (result.success) return result.data;
    errors.push(...toFieldErrors(result.error, 'body', [index, 'body']));
    return undefined;
  });
  const first = errors[0];
  if (first !== undefined) {
    throw new InvalidRequest('invalid_request', `${first.field} ${first.reason}`, {
      field: first.field,
      reason: first.reason,
      errors,
    });
  }
  return bodies;
}

/** A batch the filter admitted: the offer and its stamped envelopes. */
export interface AdmittedBatch {
  readonly credential: WriterCredential;
  readonly offered: readonly OfferedRecord[];
  readonly envelopes: readonly OfferedEnvelope[];
}

/**
 * Stamps a batch from its credential and runs the write filter (part D, row 85). Needs
 * nothing of the session, so a refusal (403) answers before "no such session" (404).
 * @throws Forbidden `filter_refused` with `index`, `kind` and `reason`.
 */
export function admitRecords(
  credential: WriterCredential,
  offered: readonly OfferedRecord[],
  cause: Envelope | null = null,
): AdmittedBatch {
  // Part D: the producer and the idem slot come from the credential, never the body.
  const envelopes: OfferedEnvelope[] = offered.map((record, index) => ({
    kind: record.kind,
    producer: credential.producer,
    to: null,
    idem:
      credential.audience === 'grant' && credential.cause !== undefined
        ? completionIdem(credential.cause)
        : holderIdem(credential.key, index),
  }));
  const verdict = filterBatch(credential, envelopes, cause);
  if (!verdict.accepted) {
    throw new Forbidden(
      'filter_refused',
      `record ${verdict.index} (${verdict.kind.name}@${verdict.kind.version}) is refused: ${verdict.reason}`,
      { extensions: { index: verdict.index, kind: verdict.kind, reason: verdict.reason } },
    );
  }
  return { credential, offered, envelopes };
}

/**
 * The append an admitted batch makes on `stream`: registered kinds' bodies (400) and body
 * sizes (413) checked, the bodies in their stored form and the batch's fingerprint.
 */
export function prepareAppend(
  seal: BodySealer | undefined,
  stream: string,
  batch: AdmittedBatch,
): AppendBatch {
  const { credential, offered, envelopes } = batch;
  const bodies = parsedBodies(offered);
  // The canonical text of an offered body stored as it came (no schema or seal, or a
  // schema that gave back a copy of it), which the fingerprint then need not make again.
  const asOffered: (string | undefined)[] = [];
  const records: PendingRecord[] = envelopes.map((envelope, index) => {
    const stored = seal === undefined ? bodies[index] : seal(envelope.kind, bodies[index]);
    const field = `body.${index}.body`;
    const body = canonicalText(stored, field);
    // Row 12: size is the bytes of the stored canonical body; row 87 bounds it.
    if (Buffer.byteLength(body, 'utf8') > MAX_RECORD_BODY_BYTES) {
      throw new PayloadTooLarge(
        'record_too_large',
        `${field} is over ${MAX_RECORD_BODY_BYTES} bytes of canonical JSON`,
        { field, reason: `must be at most ${MAX_RECORD_BODY_BYTES} bytes of canonical JSON` },
      );
    }
    if (sameJson(stored, offered[index]?.body)) asOffered[index] = body;
    return { ...envelope, body };
  });
  return {
    stream,
    records,
    key: credential.key,
    fingerprint: batchFingerprint(offered, asOffered),
  };
}

/** Lands a prepared append: one log-store call (replay, 409 `idempotency_conflict`, 409 `session_archived`). */
export async function landRecords(logStore: LogStore, append: AppendBatch): Promise<AppendOutcome> {
  const result = await logStore.append(append);
  return { outcome: result.outcome, envelopes: result.records.map((record) => record.envelope) };
}
