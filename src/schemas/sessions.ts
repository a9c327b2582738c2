/**
 * Sessions on the wire: opening one (4.1, decisions row 63), the token answer (2.9),
 * the status with its live turn (2.10, rows 34 to 36) and the directory pages
 * (2.11, rows 37 to 40 and 75).
 */
import { z } from 'zod';
import {
  Count,
  Cursor,
  Millis,
  Next,
  OpaqueId,
  Sha256Hex,
  StreamId,
  Timestamp,
  orMissing,
  queryInteger,
} from './common.ts';
import { ExecutorSpec } from './executor.ts';

/** Decisions row 63: the largest `instructions`, in UTF-8 bytes. */
export const MAX_INSTRUCTIONS_BYTES = 64 * 1024;
/** Decisions row 40: rows per directory page by default, and the most a page holds. */
export const DEFAULT_PAGE_LIMIT = 50;
export const MAX_PAGE_LIMIT = 200;
/** Decisions row 63: the default of `rounds`. */
export const DEFAULT_ROUNDS = 16;

/** 4.1, decisions row 63: the install's own name for the user, ≤256 characters. */
export const Principal = z
  .string({
    error: (issue) => (issue.input === undefined ? 'is required' : 'must be given once, as text'),
  })
  .min(1, { error: 'must not be empty' })
  .max(256, { error: 'must be at most 256 characters' });

/** 4.1 `params`, decisions row 63: sampling settings for the session's inferences. */
export const SamplingParams = z
  .object({
    max_tokens: z.number().int().min(1, { error: 'must be at least 1' }).nullable().optional(),
    stop: z
      .array(
        z
          .string()
          .min(1, { error: 'must not be empty' })
          .max(256, { error: 'must be at most 256 characters' }),
      )
      .max(4, { error: 'must hold at most 4 sequences' })
      .optional(),
    temperature: z
      .number()
      .min(0, { error: 'must be 0 to 2' })
      .max(2, { error: 'must be 0 to 2' })
      .nullable()
      .optional(),
    top_p: z
      .number()
      .min(0, { error: 'must be 0 to 1' })
      .max(1, { error: 'must be 0 to 1' })
      .nullable()
      .optional(),
  })
  .meta({ id: 'SamplingParams', description: 'Sampling settings of a session.' });
export type SamplingParams = z.infer<typeof SamplingParams>;

/** 4.1 `POST /sessions` body; every member optional. An absent body reads as `{}`. */
export const OpenSessionBody = z
  .object({
    executor: ExecutorSpec.optional(),
    instructions: z
      .string()
      .refine((text) => Buffer.byteLength(text, 'utf8') <= MAX_INSTRUCTIONS_BYTES, {
        error: `must be at most ${MAX_INSTRUCTIONS_BYTES} bytes`,
      })
      .optional()
      .describe('System instructions, at most 64 KiB of UTF-8.'),
    params: SamplingParams.optional(),
    rounds: z
      .int32({ error: orMissing('must be an integer') })
      .min(1, { error: 'must be 1 to 128' })
      .max(128, { error: 'must be 1 to 128' })
      .default(DEFAULT_ROUNDS)
      .describe('Most model rounds per turn, 1 to 128.'),
  })
  .meta({ id: 'OpenSessionBody', description: 'What a session opens with.' });
export type OpenSessionBody = z.infer<typeof OpenSessionBody>;

/**
 * The route schema of the `POST /sessions` body: Fastify hands an absent body over as
 * null or undefined, which reads as `{}` so the defaults apply.
 */
export const OpenSessionRequest = z.preprocess((body) => body ?? {}, OpenSessionBody);

/** 4.1 `POST /sessions` and `GET /sessions/{id}/token` query: the principal vouched for. */
export const PrincipalQuery = z.object({ principal: Principal });
export type PrincipalQuery = z.infer<typeof PrincipalQuery>;

/** 2.9: a session id and a token for it. */
export const SessionAnswer = z
  .object({
    session: StreamId,
    token: z.string(),
    expires: Millis.describe('When the token lapses, Unix ms: an hour after it was minted.'),
  })
  .meta({ id: 'SessionAnswer', description: 'A session and a token that attaches to it.' });
export type SessionAnswer = z.infer<typeof SessionAnswer>;

/** Decisions row 35 and part C: the phase of the live turn. */
export const LivePhase = z.enum(['idle', 'inferring', 'awaiting_tools', 'compacting', 'ended']);
export type LivePhase = z.infer<typeof LivePhase>;

/** Decisions row 34: the active turn of a session. */
export const LiveStatus = z
  .object({
    phase: LivePhase,
    turn: Cursor.nullable().describe(
      'Cursor of the turn.started of the active turn; null when idle.',
    ),
    round: z.int32().min(1).nullable().describe('The round within the turn; null when idle.'),
    since: Millis.describe('When the phase was entered, Unix ms.'),
    prompt_tokens: Count.describe('Prompt tokens of the last inference.'),
    pending: z
      .array(
        z.object({
          cursor: Cursor.describe('Cursor of the invoke.allowed awaiting completion.'),
          call: z.string(),
          tool: z.string(),
        }),
      )
      .describe('Calls awaiting completion.'),
  })
  .meta({
    id: 'LiveStatus',
    description:
      'What the session’s turn is doing now: its phase, round and the calls it waits for.',
  });
export type LiveStatus = z.infer<typeof LiveStatus>;

/** 2.10: the status of a session; `head` is the last landed cursor (row 36). */
export const SessionStatus = z
  .object({
    archived: z.boolean(),
    head: Count.describe('The last landed cursor.'),
    id: StreamId,
    live: LiveStatus,
  })
  .meta({ id: 'SessionStatus', description: 'The status of a session.' });
export type SessionStatus = z.infer<typeof SessionStatus>;

/** 2.11, decisions rows 37 and 38: one row of the session directory. */
export const DirectoryRow = z
  .object({
    archived: z.boolean(),
    id: StreamId,
    opened: Timestamp.describe('When the session opened, RFC 3339 UTC.'),
    subject: Sha256Hex.nullable().describe('SHA-256(install ‖ principal); null once erased.'),
  })
  .meta({ id: 'DirectoryRow', description: 'A session directory row.' });
export type DirectoryRow = z.infer<typeof DirectoryRow>;

/** Decisions row 39: a directory page, newest first, continued by `next`. */
export const DirectoryPage = z
  .object({ items: z.array(DirectoryRow), next: Next })
  .meta({ id: 'DirectoryPage', description: 'One page of the session directory.' });
export type DirectoryPage = z.infer<typeof DirectoryPage>;

/** Decisions row 40: `limit` ≤0 is refused, above 200 is clamped, absent is 50. */
const PageLimit = queryInteger(
  z
    .number()
    .int()
    .min(1, { error: 'must be at least 1' })
    .overwrite((limit) => Math.min(limit, MAX_PAGE_LIMIT)),
)
  .default(DEFAULT_PAGE_LIMIT)
  .describe('Most rows on the page: default 50, at most 200 (larger values are clamped).');

const After = z
  .string()
  .min(1, { error: 'must not be empty' })
  .optional()
  .describe('The `next` of the previous page.');

/** 4.1 `GET /sessions` query. */
export const ListSessionsQuery = z.object({
  principal: Principal.optional().describe('Only sessions filed under this principal.'),
  after: After,
  limit: PageLimit,
});
export type ListSessionsQuery = z.infer<typeof ListSessionsQuery>;

/** Decisions row 75: `GET /console/sessions` query. */
export const ConsoleSessionsQuery = z.object({ after: After, limit: PageLimit });
export type ConsoleSessionsQuery = z.infer<typeof ConsoleSessionsQuery>;

/** Decisions row 75: a console directory row names the install too. */
export const ConsoleDirectoryRow = DirectoryRow.extend({ install: OpaqueId }).meta({
  id: 'ConsoleDirectoryRow',
  description: 'A session directory row with its install.',
});
export type ConsoleDirectoryRow = z.infer<typeof ConsoleDirectoryRow>;

/** Decisions row 75: one page of the tenant's session directory. */
export const ConsoleDirectoryPage = z
  .object({ items: z.array(ConsoleDirectoryRow), next: Next })
  .meta({ id: 'ConsoleDirectoryPage', description: "One page of the tenant's sessions." });
export type ConsoleDirectoryPage = z.infer<typeof ConsoleDirectoryPage>;
