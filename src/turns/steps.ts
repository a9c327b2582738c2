/**
 * The work of each step the planner names (`plan.ts`), landing its record under the
 * step's key (`records.ts`): what the chart owes, one inference attempt, a compaction
 * request and its summary. The answers to calls are in `call-steps.ts`.
 *
 * A step lands at most one record. A step run again lands nothing new: its key replays
 * the first body, or refuses a different one, and either way the state catches up from
 * the log and the planner moves on from what actually landed.
 */
import { isServiceError } from '../errors.ts';
import {
  InferenceFailure,
  type InferenceProvider,
  type PromptItem,
} from '../inference/provider.ts';
import type { Owed, TurnEndReason } from '../machines/turn.types.ts';
import type { InferenceValue } from '../resources/types.ts';
import { parseDuration } from '../schemas/duration.ts';
import { sealLayer } from '../sessions/sealing.ts';
import type { Authorizer } from '../policy/authorizer.ts';
import type { GateClaims } from '../gate/gate.ts';
import type { Clock } from '../clock.ts';
import type { ToolCallOutcome, ToolCallRequest } from '../connections/tool-calls.ts';
import type { LogStore, PendingRecord, StoredRecord } from '../storage/log-store.ts';
import { retryDelay } from './plan.ts';
import { keyedBatch, PRODUCERS, serviceRecord, stepKey } from './records.ts';
import type { SessionState } from './session-state.ts';

/** What the steps of one session work with. */
export interface StepContext {
  readonly log: LogStore;
  readonly state: SessionState;
  readonly option: InferenceValue;
  readonly provider: InferenceProvider;
  /** The tenant's sealing key (part D). */
  readonly tenantKey: Buffer;
  /** Aborted when the driver stops (lease lost, shutdown). */
  readonly signal: AbortSignal;
  /** Decides the calls of the session (its pinned surface and the tenant's policies). */
  readonly authorizer: Authorizer;
  /** Signs the gate of an allowed call (part B). */
  readonly signGate: (claims: GateClaims) => Promise<string>;
  readonly clock: Clock;
  /** Calls a tenant's extra tool over MCP (row 89). */
  readonly callTool: (request: ToolCallRequest) => Promise<ToolCallOutcome>;
  readonly tenant: string;
  /** Hears each `turn.ended` this step landed (metrics): its reason and duration. */
  readonly turnEnded: TurnEnded;
}

/** A `turn.ended` landed here: its reason, and seconds since `turn.started` when known. */
export type TurnEnded = (reason: TurnEndReason, seconds: number | null) => void;

/**
 * Lands `record` under its key and brings the state up to it: straight from the append's
 * answer when it continues the head (the common case, no read), else by catching up with
 * the log. Either way the planner next sees what this step landed. Answers the record
 * when this call minted it, null when it had landed before.
 */
export async function land(
  ctx: Pick<StepContext, 'log' | 'state'>,
  record: PendingRecord,
  plain?: unknown,
): Promise<StoredRecord | null> {
  let landed: readonly StoredRecord[] = [];
  let minted = false;
  try {
    const result = await ctx.log.append(keyedBatch(ctx.state.session, record, plain));
    landed = result.records;
    minted = result.outcome === 'landed';
  } catch (error) {
    // The step landed before (another body under its key) or the session was archived:
    // what landed is the truth, and the catch-up below brings it in.
    const known =
      isServiceError(error) &&
      (error.code === 'idempotency_conflict' || error.code === 'session_archived');
    if (!known) throw error;
  }
  if (!ctx.state.absorb(landed)) await ctx.state.catchUp(ctx.log);
  return minted ? (landed[0] ?? null) : null;
}

/** Lands what the chart owes: `turn.started` or `turn.ended` (part B bodies). */
export async function landOwed(ctx: StepContext, owed: Owed): Promise<void> {
  const context = ctx.state.context;
  if (owed.kind === 'turn.started') {
    const body = { inputs: owed.inputs, rounds: context.opened.rounds };
    const first = owed.inputs[0] ?? context.head;
    await land(ctx, serviceRecord('turn.started', PRODUCERS.turn, stepKey.start(first), body));
    return;
  }
  await landEnded(ctx, context.turn ?? 0, owed.reason, owed.error);
}

/**
 * Lands `turn.ended` for `turn` under the turn's `end` key, so two enders (the chart's
 * owed end and an archive's, row 60) land one between them; the one that minted it tells
 * `turnEnded`.
 */
export async function landEnded(
  ctx: Pick<StepContext, 'log' | 'state' | 'turnEnded'>,
  turn: number,
  reason: TurnEndReason,
  error: string | null,
): Promise<void> {
  const { context, turnStartedAt } = ctx.state;
  const body = { turn, reason, rounds: context.round, usage: context.usage, error };
  const key = stepKey.end(turn);
  const ended = await land(ctx, serviceRecord('turn.ended', PRODUCERS.turn, key, body));
  if (ended !== null) ctx.turnEnded(reason, secondsSince(turnStartedAt, ended));
}

/** Seconds from `startedAt` to the record's `at`; null when the start was not seen. */
function secondsSince(startedAt: number | null, record: StoredRecord): number | null {
  return startedAt === null ? null : Math.max(0, record.envelope.at - startedAt) / 1000;
}

/** Row 50: the backoff of the session's option, in ms. */
function backoffMs(option: InferenceValue): number {
  return parseDuration(option.retry.backoff) ?? 1000;
}

/**
 * One inference attempt of the round in flight: `model.output` on an answer,
 * `inference.failed` (with `retry_in`, null once attempts are spent) on a failure, nothing
 * when it was aborted because the turn moved on (a cancel, an archive) or the driver stops.
 */
/**
 * Why an inference is aborted: the round moved on (its answer landed, a cancel, an
 * archive) or the driver stops. One reason for all, made once: an abort without one makes
 * a DOMException, stack trace and all, and every turn's own answer aborts its attempt.
 */
const SUPERSEDED = new Error('the inference is no longer wanted');

export async function infer(ctx: StepContext): Promise<void> {
  const { state } = ctx;
  const { turn, round, attempts } = state.context;
  if (turn === null) return;
  const attempt = attempts.failed + 1;
  const controller = new AbortController();
  const stopListening = state.listen(() => {
    const c = state.context;
    if (state.phase !== 'inferring' || c.turn !== turn || c.round !== round) {
      controller.abort(SUPERSEDED);
    }
  });
  const onStop = (): void => {
    controller.abort(SUPERSEDED);
  };
  ctx.signal.addEventListener('abort', onStop, { once: true });
  const key = stepKey.attempt(turn, round, attempt);
  try {
    const answer = await ctx.provider.infer({
      instructions: state.basics.instructions,
      prompt: state.transcript.prompt(),
      params: state.basics.params,
      failures: state.context.attempts.inTurn,
      signal: controller.signal,
    });
    const calls = answer.toolCalls.map((call) => ({
      id: call.id,
      name: call.name,
      args: call.args,
    }));
    const plain = {
      turn,
      round,
      text: answer.text,
      tool_calls: calls,
      stop: answer.stop,
      model: answer.model,
      usage: answer.usage,
    };
    // Without calls nothing is sealed: the body is the plain one, written once.
    const body =
      calls.length === 0
        ? plain
        : {
            ...plain,
            tool_calls: calls.map((call) => ({
              id: call.id,
              name: call.name,
              evidence: {},
              args: sealLayer(call.args, ctx.tenantKey),
            })),
          };
    const record = serviceRecord('model.output', PRODUCERS.turn, key, body);
    await land(ctx, record, body === plain ? undefined : plain);
  } catch (error) {
    if (controller.signal.aborted) return;
    if (!(error instanceof InferenceFailure)) throw error;
    const body = {
      turn,
      round,
      attempt,
      retry_in: retryDelay(attempt, ctx.option.retry.attempts, backoffMs(ctx.option)),
      error: error.message,
    };
    await land(ctx, serviceRecord('inference.failed', PRODUCERS.turn, key, body));
  } finally {
    stopListening();
    ctx.signal.removeEventListener('abort', onStop);
  }
}

/** §6.3: `compaction.requested` before the attempt whose prompt reached `compact_at`. */
export async function requestCompaction(
  ctx: StepContext,
  promptTokens: number,
  through: number,
): Promise<void> {
  const { turn, round, attempts } = ctx.state.context;
  const failed = attempts.failed;
  const body = {
    turn: turn ?? 0,
    prompt_tokens: promptTokens,
    compact_at: ctx.option.compact_at,
    through,
  };
  const key = stepKey.compact(turn ?? 0, round, failed + 1);
  await land(ctx, serviceRecord('compaction.requested', PRODUCERS.compactor, key, body));
}

/** §6.3: the summary answering compaction `requested`, through the cursor it named. */
export async function summarize(ctx: StepContext, requested: number): Promise<void> {
  const { state } = ctx;
  const [request] = await ctx.log.read(state.session, { from: requested, limit: 1 });
  const asked = JSON.parse(request?.body ?? '{}') as { through?: unknown; prompt_tokens?: unknown };
  const through = typeof asked.through === 'number' ? asked.through : state.head;
  const tokensBefore = typeof asked.prompt_tokens === 'number' ? asked.prompt_tokens : 0;
  const answer = await ctx.provider.summarize({
    instructions: state.basics.instructions,
    prompt: state.transcript.promptThrough(through),
    signal: ctx.signal,
  });
  const after: PromptItem[] = [
    { role: 'summary', text: answer.summary },
    ...state.transcript.prompt().slice(state.transcript.promptThrough(through).length),
  ];
  const body = {
    requested,
    through,
    summary: answer.summary,
    tokens_before: tokensBefore,
    tokens_after: ctx.provider.promptTokens(state.basics.instructions, after),
    usage: answer.usage,
    model: ctx.provider.key,
  };
  const key = stepKey.summary(state.context.turn ?? 0, requested);
  await land(ctx, serviceRecord('compaction.completed', PRODUCERS.compactor, key, body));
}
