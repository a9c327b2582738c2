/**
 * The bodies of the record kinds of decisions part B, all at version 1, and the registry
 * the intake checks registered kinds against (decisions row 14).
 *
 * A turn is named by the cursor of its `turn.started`; spans are milliseconds; fields
 * marked sealed in part B (call `args`, completion `result`) read either as plaintext
 * or as the `{sealed}` layer public faces serve in their place (part D).
 */
import { z } from 'zod';
import { Count, Cursor, Millis, OpaqueId, Sha256Hex } from './common.ts';
import { ExecutorSpec } from './executor.ts';
import { Sealed, type Kind } from './records.ts';
import { SamplingParams } from './sessions.ts';

/** Every kind of part B is at version 1. */
export const RECORD_KIND_VERSION = 1;

const Turn = Cursor.describe('The cursor of the turn.started that opened the turn.');
const Round = z.int32().min(1);
const CallId = z.string().min(1).max(256).describe('The call id the model gave the tool call.');
const Text = z.string();
const Usage = z.object({ input: Count, output: Count });
const Evidence = z
  .record(z.string(), z.unknown())
  .describe("Values of the policy's `project` args, public beside the sealed args.");
const Args = z
  .union([Sealed, z.record(z.string(), z.unknown())])
  .describe('Call arguments; sealed on public faces.');

/** The MCP `CallToolResult` a completion carries. */
const CallToolResult = z.looseObject({
  content: z.array(z.looseObject({ type: z.string() })),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
});

/** session.opened: what the session runs under, pinned for its life (§3.5). */
export const SessionOpenedBody = z
  .object({
    install: OpaqueId,
    principal: z.string(),
    instructions: z
      .string()
      .nullable()
      .default(null)
      .describe('The system instructions the session runs with (given to the model).'),
    executor: ExecutorSpec.nullable(),
    tools: z.array(
      z.object({
        name: z.string().describe('The name the model sees.'),
        source: z.string().describe('`vendor` or `connection:<name>`.'),
      }),
    ),
    params: SamplingParams,
    rounds: z.int32().min(1).max(128),
    config: Sha256Hex.describe('Hash of the composed document the session pinned.'),
  })
  .meta({ id: 'SessionOpenedBody', description: 'Body of session.opened@1.' });
export type SessionOpenedBody = z.infer<typeof SessionOpenedBody>;

/** message.submitted: what a principal or console user says; 1 to 100k characters. */
export const MessageSubmittedBody = z
  .object({
    text: z
      .string()
      .min(1, { error: 'must not be empty' })
      .max(100_000, { error: 'must be at most 100000 characters' }),
  })
  .meta({ id: 'MessageSubmittedBody', description: 'Body of message.submitted@1.' });
export type MessageSubmittedBody = z.infer<typeof MessageSubmittedBody>;

/** turn.cancel: cancels the named turn, or the active one when null. */
export const TurnCancelBody = z
  .object({ turn: Turn.nullable().default(null) })
  .meta({ id: 'TurnCancelBody', description: 'Body of turn.cancel@1.' });
export type TurnCancelBody = z.infer<typeof TurnCancelBody>;

/** turn.started: the queued messages the turn answers. */
export const TurnStartedBody = z
  .object({ inputs: z.array(Cursor), rounds: z.int32().min(1).max(128) })
  .meta({ id: 'TurnStartedBody', description: 'Body of turn.started@1.' });
export type TurnStartedBody = z.infer<typeof TurnStartedBody>;

/** model.output: one inference's answer. */
export const ModelOutputBody = z
  .object({
    turn: Turn,
    round: Round,
    text: Text.nullable(),
    tool_calls: z.array(z.object({ id: CallId, name: z.string(), evidence: Evidence, args: Args })),
    stop: z.enum(['end_turn', 'tool_use', 'max_tokens', 'stop_sequence']),
    model: z.string(),
    usage: Usage,
  })
  .meta({ id: 'ModelOutputBody', description: 'Body of model.output@1.' });
export type ModelOutputBody = z.infer<typeof ModelOutputBody>;

/** invoke.allowed: the authorizer's grant of one call, addressed to its performer. */
export const InvokeAllowedBody = z
  .object({
    turn: Turn,
    cause: Cursor.describe('The model.output that made the call.'),
    call: CallId,
    tool: z.string(),
    target: z.string().describe('`executor:<n>` or `connection:<c>`.'),
    args: Args,
    evidence: Evidence,
    timeout: Millis.describe('The call deadline span, in ms.'),
    result_limit: z.int().min(1).describe('Bytes of the result the model sees.'),
    gate: z
      .string()
      .optional()
      .describe('Service-signed compact JWS over the call; absent in the opened audit.'),
  })
  .meta({ id: 'InvokeAllowedBody', description: 'Body of invoke.allowed@1.' });
export type InvokeAllowedBody = z.infer<typeof InvokeAllowedBody>;

/** invoke.denied: why the authorizer refused a call. */
export const InvokeDeniedBody = z
  .object({
    turn: Turn,
    call: CallId,
    tool: z.string(),
    reason: z.enum([
      'disabled',
      'deny',
      'unsatisfied',
      'unknown_tool',
      'no_executor',
      'invalid_args',
    ]),
    item: z.int().min(0).nullable().describe('Index of the policy item that decided, if one did.'),
    evidence: Evidence,
  })
  .meta({ id: 'InvokeDeniedBody', description: 'Body of invoke.denied@1.' });
export type InvokeDeniedBody = z.infer<typeof InvokeDeniedBody>;

/** invoke.claimed: landed by a claim (3.4). */
export const InvokeClaimedBody = z
  .object({
    cause: Cursor,
    call: CallId,
    attempt: z.enum(['first', 'again']),
    expires: Millis,
  })
  .meta({ id: 'InvokeClaimedBody', description: 'Body of invoke.claimed@1.' });
export type InvokeClaimedBody = z.infer<typeof InvokeClaimedBody>;

/** invoke.completed: the one completion of a call (idem `call:<cause>`). */
export const InvokeCompletedBody = z
  .object({
    ok: z.boolean(),
    result: z
      .union([Sealed, CallToolResult], {
        error: 'must be an MCP CallToolResult ({content: [...]}) or null',
      })
      .nullable()
      .describe('The MCP CallToolResult; sealed on public faces.'),
    error: z.string().nullable().default(null),
    truncated: z
      .boolean()
      .default(false)
      .describe('Set by the service when the result was cut to result_limit.'),
  })
  .meta({ id: 'InvokeCompletedBody', description: 'Body of invoke.completed@1.' });
export type InvokeCompletedBody = z.infer<typeof InvokeCompletedBody>;

/** inference.failed: one failed inference attempt. */
export const InferenceFailedBody = z
  .object({
    turn: Turn,
    round: Round,
    attempt: z.int().min(1),
    retry_in: Millis.nullable().describe(
      'Delay before the next attempt, ms; null when retries are spent.',
    ),
    error: z.string(),
  })
  .meta({ id: 'InferenceFailedBody', description: 'Body of inference.failed@1.' });
export type InferenceFailedBody = z.infer<typeof InferenceFailedBody>;

/** compaction.requested: the prompt reached compact_at (§6.3). */
export const CompactionRequestedBody = z
  .object({ turn: Turn, prompt_tokens: Count, compact_at: z.int().min(1), through: Cursor })
  .meta({ id: 'CompactionRequestedBody', description: 'Body of compaction.requested@1.' });
export type CompactionRequestedBody = z.infer<typeof CompactionRequestedBody>;

/** compaction.completed: the summary that replaces the records through `through`. */
export const CompactionCompletedBody = z
  .object({
    requested: Cursor.describe('The compaction.requested this answers.'),
    through: Cursor,
    summary: z.string().describe('Tenant-readable summary.'),
    tokens_before: Count,
    tokens_after: Count,
    usage: Usage,
    model: z.string().default('simulated').describe('Model key of the summarising model.'),
  })
  .meta({ id: 'CompactionCompletedBody', description: 'Body of compaction.completed@1.' });
export type CompactionCompletedBody = z.infer<typeof CompactionCompletedBody>;

/** turn.ended: how and why a turn ended. */
export const TurnEndedBody = z
  .object({
    turn: Turn,
    reason: z.enum(['completed', 'cancelled', 'rounds_exhausted', 'failed', 'archived']),
    rounds: Count,
    usage: z.record(z.string(), Usage).describe('Model key to tokens.'),
    error: z.string().nullable(),
  })
  .meta({ id: 'TurnEndedBody', description: 'Body of turn.ended@1.' });
export type TurnEndedBody = z.infer<typeof TurnEndedBody>;

/** session.archived: the final record. */
export const SessionArchivedBody = z
  .object({
    by: z
      .string()
      .regex(/^(?:install|idle|install_deleted|console:.+)$/)
      .describe('`install`, `console:<user>`, `idle` or `install_deleted`.'),
  })
  .meta({ id: 'SessionArchivedBody', description: 'Body of session.archived@1.' });
export type SessionArchivedBody = z.infer<typeof SessionArchivedBody>;

/** Every kind of part B by name, each at version 1. */
export const recordKinds = {
  'session.opened': SessionOpenedBody,
  'message.submitted': MessageSubmittedBody,
  'turn.cancel': TurnCancelBody,
  'turn.started': TurnStartedBody,
  'model.output': ModelOutputBody,
  'invoke.allowed': InvokeAllowedBody,
  'invoke.denied': InvokeDeniedBody,
  'invoke.claimed': InvokeClaimedBody,
  'invoke.completed': InvokeCompletedBody,
  'inference.failed': InferenceFailedBody,
  'compaction.requested': CompactionRequestedBody,
  'compaction.completed': CompactionCompletedBody,
  'turn.ended': TurnEndedBody,
  'session.archived': SessionArchivedBody,
} as const satisfies Record<string, z.ZodType>;

/** The name of a registered kind. */
export type RecordKindName = keyof typeof recordKinds;

/** The names of every registered kind. */
export const RECORD_KIND_NAMES = Object.keys(recordKinds) as RecordKindName[];

/** One key for a kind and its version, which form one unit (§9.2): `name@version`. */
export function kindKey(name: string, version: number): string {
  return `${name}@${version}`;
}

/** The body schemas of part B by kind name, all at `RECORD_KIND_VERSION`. */
const byKey: ReadonlyMap<string, z.ZodType> = new Map(
  RECORD_KIND_NAMES.map((name) => [name, recordKinds[name]]),
);

/** True when `name` is a kind of part B. */
export function isRecordKindName(name: string): name is RecordKindName {
  return Object.hasOwn(recordKinds, name);
}

/**
 * The body schema of a registered kind at its version, or undefined for any other kind.
 * Every registered kind is at `RECORD_KIND_VERSION`, which is checked first: no key text
 * is made per record of a batch.
 */
export function bodySchemaFor(kind: Kind): z.ZodType | undefined {
  return kind.version === RECORD_KIND_VERSION ? byKey.get(kind.name) : undefined;
}
