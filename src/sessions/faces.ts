/**
 * Faces of a session log (decisions part D, rows 66 and 70): which records a reader is
 * shown and how their sealed layers read. Pure: a landed record and a face in, a tail
 * line (or nothing) out.
 *
 * | Face | Records | Sealed layers |
 * |---|---|---|
 * | public (principal or console token) | `to === null` | `{sealed: {digest, size}}`, the digest keyed per tenant |
 * | executor `executor:<n>` | public + `to === executor:<n>`, gate included | public, except the `args` of an invoke.allowed addressed to it, which it must perform |
 * | opened (owner audit, §4.3) | every record | opened, or `{unreadable: {…, error}}`; gate stripped |
 *
 * Sealed paths (part B, kinds at version 1): `tool_calls[].args` of model.output, `args`
 * of invoke.allowed, `result` of invoke.completed.
 */
import type { StoredRecord } from '../storage/log-store.ts';
import type { Envelope, TailLine } from '../schemas/records.ts';
import { isStoredLayer, openLayer, publicLayer, type LayerOpening } from './sealing.ts';

/**
 * How a reader sees the log. `key` is the session tenant's sealing key, when known: a
 * public face needs it only to describe a layer that landed unsealed.
 */
export type Face =
  | { readonly kind: 'public'; readonly key: Buffer | null }
  | { readonly kind: 'executor'; readonly recipient: string; readonly key: Buffer | null }
  | { readonly kind: 'opened'; readonly key: Buffer | null };

/**
 * The face a session token reads (row 66): an executor's token (`executor:<n>`) sees what
 * is addressed to it; a principal's or console user's token sees public records only.
 */
export function faceFor(producer: string, key: Buffer | null): Face {
  return producer.startsWith('executor:')
    ? { kind: 'executor', recipient: producer, key }
    : { kind: 'public', key };
}

/** True when the face shows a record with this envelope at all (part D). */
export function shows(face: Face, envelope: Pick<Envelope, 'to'>): boolean {
  if (envelope.to === null || face.kind === 'opened') return true;
  return face.kind === 'executor' && envelope.to === face.recipient;
}

type Body = Record<string, unknown>;
/** Rewrites one sealed layer for a face. */
type LayerRewrite = (value: unknown) => unknown;

function isBody(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The body with every sealed layer of its kind rewritten (part B, version 1 kinds). */
function rewriteLayers(record: StoredRecord, body: unknown, rewrite: LayerRewrite): unknown {
  const { name, version } = record.envelope.kind;
  if (version !== 1 || !isBody(body)) return body;
  switch (name) {
    case 'model.output': {
      const calls = body.tool_calls;
      if (!Array.isArray(calls)) return body;
      return {
        ...body,
        tool_calls: calls.map((call: unknown) =>
          isBody(call) && 'args' in call ? { ...call, args: rewrite(call.args) } : call,
        ),
      };
    }
    case 'invoke.allowed':
      return 'args' in body ? { ...body, args: rewrite(body.args) } : body;
    case 'invoke.completed':
      return body.result === null || body.result === undefined
        ? body
        : { ...body, result: rewrite(body.result) };
    default:
      return body;
  }
}

const NO_TENANT_KEY = "the session's tenant is not known, so its layers cannot be opened";

/** Opens a layer under the tenant's key; plaintext needs no key. */
function open(value: unknown, key: Buffer | null): LayerOpening {
  if (key !== null) return openLayer(value, key);
  return isStoredLayer(value) ? { ok: false, error: NO_TENANT_KEY } : { ok: true, value };
}

/** The opened audit's reading of a layer: plaintext, or `{unreadable}` saying why (row 70). */
function openedLayer(key: Buffer | null): LayerRewrite {
  return (value) => {
    const result = open(value, key);
    if (result.ok) return result.value;
    const description = isStoredLayer(value) ? (publicLayer(value, null)?.sealed ?? {}) : {};
    return { unreadable: { ...description, error: result.error } };
  };
}

class Unreadable extends Error {}

/** A public reading of a layer: its description, or the record is unreadable without one. */
function describedLayer(key: Buffer | null): LayerRewrite {
  return (value) => {
    const described = publicLayer(value, key);
    if (described === null) throw new Unreadable(NO_TENANT_KEY);
    return described;
  };
}

/** An executor's reading of the args it performs: plaintext, or the record is unreadable. */
function performedLayer(key: Buffer | null): LayerRewrite {
  return (value) => {
    const result = open(value, key);
    if (!result.ok) throw new Unreadable(result.error);
    return result.value;
  };
}

function parseBody(text: string): { ok: true; body: unknown } | { ok: false } {
  try {
    return { ok: true, body: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function unreadableLine(record: StoredRecord, message: string): TailLine {
  return { Err: { code: 'unreadable_record', message, cursor: record.envelope.cursor } };
}

/**
 * The line a face serves for a landed record: `{Ok}` with the record as the face reads
 * it, `{Err}` when a public or executor face cannot read it (§7: a failed read of a
 * record is an `Err` line), or null when the face does not show the record.
 */
export function present(record: StoredRecord, face: Face): TailLine | null {
  const { envelope } = record;
  if (!shows(face, envelope)) return null;
  const parsed = parseBody(record.body);
  if (!parsed.ok) {
    if (face.kind !== 'opened') return unreadableLine(record, 'the record body is not JSON');
    // Row 70: the opened audit serves Ok lines only.
    return { Ok: { envelope, body: { unreadable: { error: 'the record body is not JSON' } } } };
  }
  if (face.kind === 'opened') {
    let body = rewriteLayers(record, parsed.body, openedLayer(face.key));
    // §4.3: the authorizer's invoke.allowed is served without its gate.
    if (envelope.kind.name === 'invoke.allowed' && isBody(body) && 'gate' in body) {
      body = Object.fromEntries(Object.entries(body).filter(([name]) => name !== 'gate'));
    }
    return { Ok: { envelope, body } };
  }
  const performs =
    face.kind === 'executor' &&
    envelope.kind.name === 'invoke.allowed' &&
    envelope.to === face.recipient;
  try {
    const body = rewriteLayers(
      record,
      parsed.body,
      performs ? performedLayer(face.key) : describedLayer(face.key),
    );
    return { Ok: { envelope, body } };
  } catch (error) {
    if (error instanceof Unreadable) return unreadableLine(record, error.message);
    throw error;
  }
}
