/**
 * Wire atoms shared by every audience: ids, digests, instants, cursors, names and the
 * helpers that read integers out of query strings.
 *
 * Schemas that travel as bodies or answers carry `.meta({ id })` so the OpenAPI
 * document names them as components; query and path schemas never do, because
 * @fastify/swagger must see their properties to list them as parameters.
 */
import { z } from 'zod';

/**
 * An error for a schema's own type check that says `is required` when the value is
 * absent and `reason` when it is there but wrong. Bounds a schema checks as part of its
 * type (`z.int32()`) keep their own reasons, which `toFieldErrors` words.
 */
export function orMissing(reason: string) {
  return (issue: { readonly code?: string; readonly input?: unknown }) => {
    if (issue.input === undefined) return 'is required';
    return issue.code === 'too_big' || issue.code === 'too_small' ? undefined : reason;
  };
}

/** 2.1, decisions rows 4 to 6: 72 hex characters, any case in, lowercase out. */
const STREAM_ID = /^[0-9a-fA-F]{72}$/;
/** Decisions row 4: the session-token endpoint takes 64 or 72 hex characters. */
const TOKEN_PATH_ID = /^(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{72})$/;

/**
 * A session id (2.1): the 8-hex shard and the 64-hex owner digest. Parsing lowercases
 * it; serializing does not (zod's encode skips `toLowerCase`), so answers must carry ids
 * as the service minted them or as `parseStreamId` gave them.
 */
export const StreamId = z
  .string()
  .regex(STREAM_ID, { error: 'must be 72 hex characters' })
  .toLowerCase()
  .meta({ id: 'StreamId', description: 'A session id: 72 hex characters.' });
export type StreamId = z.infer<typeof StreamId>;

/**
 * The canonical lowercase form of a session id, or null when `text` is not one.
 * Session-token and console paths use it instead of a schema, because a bad id there
 * answers 403 or 404 (decisions row 7), never 400.
 */
export function parseStreamId(text: string): string | null {
  return STREAM_ID.test(text) ? text.toLowerCase() : null;
}

/** A lowercase SHA-256 digest in hex: the vendor config hash (2.5) and subject digest (row 38). */
export const Sha256Hex = z
  .string()
  .regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lowercase hex characters' })
  .meta({ id: 'Sha256Hex', description: 'A SHA-256 digest: 64 lowercase hex characters.' });
export type Sha256Hex = z.infer<typeof Sha256Hex>;

/** An instant or a span in Unix milliseconds (int64), the unit of `at` (decisions row 29). */
export const Millis = z.number().int().meta({ description: 'Unix milliseconds (int64).' });

/** A landed record's cursor: gapless from 1 (decisions row 13). */
export const Cursor = z
  .number()
  .int()
  .min(1)
  .meta({ description: 'A cursor: the position of a landed record, from 1.' });

/** A count of tokens, events, bytes or calls. */
export const Count = z.number().int().min(0);

/** A UTC day, `YYYY-MM-DD` (2.15, GET /usage). */
export const Day = z.iso.date({ error: orMissing('must be a day written YYYY-MM-DD') });

/** An RFC 3339 UTC timestamp (decisions row 37). */
export const Timestamp = z.iso.datetime({ error: orMissing('must be an RFC 3339 UTC timestamp') });

/** Decisions row 27: a connection's name, the namespace of its tools. */
export const ConnectionName = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,31}$/, {
    error: 'must be 1 to 32 characters of a-z, 0-9 and -, starting with a letter',
  })
  .meta({ id: 'ConnectionName', description: 'A connection name: `^[a-z][a-z0-9-]{0,31}$`.' });

/**
 * The name a tenant gives an inference option or a secret. The interface leaves it open;
 * it is a path segment, so it keeps to URL-safe characters.
 */
export const ResourceName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, {
    error:
      'must be 1 to 64 characters of A-Z, a-z, 0-9, ., _ and -, starting with a letter or digit',
  })
  .meta({
    id: 'ResourceName',
    description: 'A tenant-chosen name: `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`.',
  });

/** An opaque id minted by the service (install, tenant, request). */
export const OpaqueId = z.string().min(1, { error: 'must not be empty' }).max(256);

/** A continuation as served in `next` (decisions row 39): opaque, null on the last page. */
export const Next = z
  .string()
  .nullable()
  .meta({ description: 'Pass as `after` for the next page; null on the last page.' });

/** 2.16, decisions row 56: what a put did (created answers 201, the others 200). */
export const WriteOutcome = z.enum(['created', 'replaced', 'unchanged']);
export type WriteOutcome = z.infer<typeof WriteOutcome>;

/** 2.16: the answer of a put. */
export const WriteAnswer = z
  .object({ outcome: WriteOutcome })
  .meta({ id: 'WriteAnswer', description: 'What a put did.' });
export type WriteAnswer = z.infer<typeof WriteAnswer>;

/** The digits of an integer in a query string, sign allowed so `-1` is refused by its bound. */
const QUERY_INTEGER = /^-?[0-9]{1,16}$/;

/**
 * An integer read from a query string: the pattern refuses what does not parse, then
 * `inner` bounds the number. In JSON Schema the input side is the string with its pattern.
 */
export function queryInteger<T extends z.ZodType<number, number>>(inner: T) {
  return z
    .string()
    .regex(QUERY_INTEGER, { error: 'must be an integer' })
    .pipe(z.coerce.number<string>().pipe(inner));
}

/** A path whose only parameter is `id`, of a shape checked by the route itself. */
export const IdParams = z.object({ id: z.string().min(1, { error: 'must not be empty' }) });
export type IdParams = z.infer<typeof IdParams>;

/** A path whose only parameter is the `id` a tenant names a resource by (a `ResourceName`). */
export const NameParams = z.object({ id: ResourceName });

/** Decisions row 4: `GET /sessions/{id}/token` refuses ids of neither 64 nor 72 hex. */
export const SessionTokenParams = z.object({
  id: z.string().regex(TOKEN_PATH_ID, { error: 'must be 64 or 72 hex characters' }).toLowerCase(),
});
export type SessionTokenParams = z.infer<typeof SessionTokenParams>;
