/**
 * Records on the wire (2.2 to 2.4, 4.2): the stamped envelope, landed and offered
 * records, the append body and answer, and the lines of the tails.
 */
import { z } from 'zod';
import { Count, Cursor, Millis, StreamId, orMissing, queryInteger } from './common.ts';

/** Decisions row 15: a well formed kind name, dotted lowercase segments. */
export const KIND_NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;

/** Decisions row 87: at most this many records in one append (more answers 413, not 400). */
export const MAX_RECORDS_PER_APPEND = 100;
/** Decisions row 87: the largest record body, as canonical JSON bytes (more answers 413). */
export const MAX_RECORD_BODY_BYTES = 256 * 1024;

/** 2.4, decisions rows 11 and 14: what the intake stamps and a client therefore never sends. */
export const STAMPED_FIELDS = ['cursor', 'at', 'producer', 'size', 'stream', 'idem', 'to'] as const;

/** A kind's name: ≤64 characters of dotted lowercase segments (row 15). */
export const KindName = z
  .string()
  .max(64, { error: 'must be at most 64 characters' })
  .regex(KIND_NAME, {
    error: 'must be dotted lowercase segments such as message.submitted (a-z, 0-9, _)',
  });

/** A kind's version: int32 from 1 (row 15). */
export const KindVersion = z
  .int32({ error: orMissing('must be an integer') })
  .min(1, { error: 'must be at least 1' });

/** 2.2, §9.2: a record kind, name and version as one unit. */
export const Kind = z
  .object({ name: KindName, version: KindVersion })
  .meta({ id: 'Kind', description: 'A record kind: name and version form one unit.' });
export type Kind = z.infer<typeof Kind>;

/** 2.2: the envelope stamped at intake; the only surface the write filter reads. */
export const Envelope = z
  .object({
    at: Millis.describe('Unix milliseconds, minted with the cursor.'),
    cursor: Cursor,
    idem: z
      .string()
      .nullable()
      .describe(
        'Idempotency slot: `<idk>:<i>` for record i of a client batch under token key idk, `call:<cause>` for a call’s completion, `claim:<cause>:<n>` for the n-th claim of a call, `svc:…` for the service’s own records; null when none.',
      ),
    kind: Kind,
    producer: z
      .string()
      .describe('`principal:<n>`, `console:<user>`, `executor:<n>` or `service:<component>`.'),
    size: z.int32().min(0).describe('Bytes of the body as stored, in canonical JSON (RFC 8785).'),
    stream: StreamId,
    to: z
      .string()
      .nullable()
      .describe(
        'The recipient of an addressed record (`executor:<n>`, `connection:<c>`); null is public.',
      ),
  })
  .meta({ id: 'Envelope', description: 'The envelope stamped on a landed record.' });
export type Envelope = z.infer<typeof Envelope>;

/** 2.3: a landed record; `body` is opaque here, its kind's schema reads it. */
export const LandedRecord = z
  .object({ envelope: Envelope, body: z.unknown() })
  .meta({ id: 'LandedRecord', description: 'A landed record: its envelope and body.' });
export type LandedRecord = z.infer<typeof LandedRecord>;

/**
 * 2.4: what a client offers. Strict: a stamped field in the offer is a 400 (row 14),
 * and so is any other field, since an offer has only these two.
 */
export const OfferedRecord = z
  .strictObject(
    {
      kind: Kind,
      body: z
        .unknown()
        .describe('Any JSON; registered kinds are checked against their body schema.'),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `is not sent: an offered record has only kind and body; the service stamps ${STAMPED_FIELDS.join(', ')}`
          : undefined,
    },
  )
  .meta({ id: 'OfferedRecord', description: 'A record as a client offers it.' });
export type OfferedRecord = z.infer<typeof OfferedRecord>;

/** 4.2 append body: one atomic batch. The record count bound is the intake's 413 (row 87). */
export const AppendBody = z
  .array(OfferedRecord)
  .min(1, { error: 'must hold at least one record' })
  .meta({ id: 'AppendBody', description: 'A batch of offered records, landed atomically.' });
export type AppendBody = z.infer<typeof AppendBody>;

/** 4.2 append answer: the landed envelopes in cursor order. */
export const AppendAnswer = z
  .array(Envelope)
  .meta({ id: 'AppendAnswer', description: 'The envelopes of the landed batch, in cursor order.' });
export type AppendAnswer = z.infer<typeof AppendAnswer>;

/** 4.2 tail query, decisions row 68: `from` inclusive (≥0), `to` exclusive. */
export const TailQuery = z.object({
  from: queryInteger(z.number().int().min(0, { error: 'must be at least 0' })).describe(
    'First cursor to read, inclusive.',
  ),
  to: queryInteger(z.number().int().min(1, { error: 'must be at least 1' }))
    .optional()
    .describe('Cursor to stop before; absent keeps the tail open.'),
});
export type TailQuery = z.infer<typeof TailQuery>;

/** Decisions row 70: `opened=1` serves the opened audit face; absent or 0 the plain one. */
export const AuditQuery = z.object({
  opened: z
    .enum(['0', '1'], { error: 'must be 1 (opened) or 0 (plain)' })
    .optional()
    .describe('`1` serves the opened face (owners only, ended sessions).'),
});
export type AuditQuery = z.infer<typeof AuditQuery>;

/** Decisions row 67: why a record could not be served on a tail. */
export const TailError = z
  .object({
    code: z.string(),
    message: z.string(),
    cursor: Cursor.nullable(),
  })
  .meta({
    id: 'TailError',
    description:
      'The reason on an `Err` line of a tail (`reader_lagging`, `token_expired`, `read_failed`, …) and the cursor to tail again from.',
  });
export type TailError = z.infer<typeof TailError>;

/** 4.2: one line of a tail, `{"Ok": record}` or `{"Err": reason}`. */
export const TailLine = z
  .union([z.object({ Ok: LandedRecord }), z.object({ Err: TailError })])
  .meta({ id: 'TailLine', description: 'One JSON line of a tail: key `Ok` or key `Err`.' });
export type TailLine = z.infer<typeof TailLine>;

/** Part D: a sealed layer as public faces serve it, in place of call args or a result. */
export const Sealed = z
  .object({
    sealed: z.object({
      digest: z
        .string()
        .regex(/^(hmac-sha256|sha256):[0-9a-f]{64}$/)
        .describe(
          '`hmac-sha256:<hex>`, keyed per tenant, of the RFC 8785 form of the plaintext: equal layers of one tenant have equal digests, and a guess cannot be checked against one. Layers sealed before keyed digests carry `sha256:<hex>`.',
        ),
      size: Count,
    }),
  })
  .meta({
    id: 'Sealed',
    description: 'A sealed layer: digest and size of the encrypted plaintext.',
  });
export type Sealed = z.infer<typeof Sealed>;
