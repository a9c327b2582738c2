/**
 * What a session's driver does next, read off the turn machine's state (decisions part C,
 * rows 50, 51, 53, 60, 61, 90). Pure: the same state, prompt size and time give the same
 * step, so a driver that crashed and one that takes over decide alike.
 *
 * Order of precedence: a usage checkpoint that is due (row 53), then what the chart owes
 * (`turn.started`, `turn.ended`), then the phase's own work: ask the model (after the
 * retry's backoff, and after compacting when the prompt reached `compact_at`, §6.3),
 * summarise, decide the calls of the round in order and complete those past their deadline
 * (row 58), resting until the first deadline while the others are out; an idle session
 * rests until its next due time (the idle archive, row 61, or the next checkpoint), and an
 * archived one stops once its records are counted.
 */
import type { Owed, TurnContext, TurnPhase } from '../machines/turn.types.ts';

export interface PlanInput {
  readonly phase: TurnPhase;
  readonly context: TurnContext;
  readonly now: number;
  /**
   * Prompt tokens of the next inference (instructions and transcript). Read only while
   * inferring with nothing owed, so a caller may give 0 elsewhere (measuring costs the
   * length of the conversation).
   */
  readonly promptTokens: number;
  /** 2.13 `compact_at` of the session's inference option. */
  readonly compactAt: number;
  /** The cursor a compaction would summarise through, or null when nothing is left to summarise. */
  readonly compactThrough: number | null;
  /** Row 61: when the session is archived as idle (`lastAt` + the idle span). */
  readonly idleArchiveAt: number;
  /** Row 53: when the next usage checkpoint is due; null when every record is counted. */
  readonly checkpointAt: number | null;
}

/** One step of the driver. */
export type Step =
  | { readonly type: 'checkpoint' }
  | { readonly type: 'land'; readonly owed: Owed }
  | { readonly type: 'wait'; readonly until: number }
  | { readonly type: 'compact'; readonly through: number }
  | { readonly type: 'infer' }
  | { readonly type: 'summarize'; readonly requested: number }
  | { readonly type: 'authorize'; readonly call: string; readonly tool: string }
  | { readonly type: 'expire'; readonly cause: number }
  | {
      readonly type: 'perform';
      readonly cause: number;
      readonly call: string;
      readonly tool: string;
      readonly deadline: number;
    }
  | { readonly type: 'archive' }
  | { readonly type: 'rest'; readonly until: number | null };

/** The driver's next step. */
export function plan(input: PlanInput): Step {
  const { phase, context, now } = input;
  if (input.checkpointAt !== null && input.checkpointAt <= now) return { type: 'checkpoint' };
  if (phase === 'ended') return { type: 'rest', until: input.checkpointAt };
  const owed = context.owed[0];
  if (owed !== undefined) return { type: 'land', owed };
  switch (phase) {
    case 'inferring':
      if (context.attempts.retryAt !== null && now < context.attempts.retryAt) {
        return { type: 'wait', until: context.attempts.retryAt };
      }
      // §6.3: compaction is checked before every inference, not again right after one.
      if (input.promptTokens >= input.compactAt && input.compactThrough !== null) {
        return { type: 'compact', through: input.compactThrough };
      }
      return { type: 'infer' };
    case 'compacting':
      return { type: 'summarize', requested: context.compaction ?? 0 };
    case 'awaiting_tools': {
      // The calls are decided in the order the model made them.
      const open = context.calls.find((call) => call.state === 'open');
      if (open !== undefined) return { type: 'authorize', call: open.call, tool: open.tool };
      // Row 58: a call not completed by its deadline is completed as timed out.
      const out = context.calls.filter((call) => call.state === 'allowed');
      const expired = out.find((call) => call.deadline !== null && call.deadline <= now);
      if (expired?.cause != null) return { type: 'expire', cause: expired.cause };
      // Row 89: the service performs the calls to extra tools itself.
      const mcp = out.find((call) => call.target?.startsWith('connection:') === true);
      if (mcp?.cause != null && mcp.deadline !== null) {
        const { cause, call, tool, deadline } = mcp;
        return { type: 'perform', cause, call, tool, deadline };
      }
      // Completions wake the driver (they mark the session due); else the first deadline
      // or the next checkpoint, whichever comes first.
      const times = out.flatMap((call) => (call.deadline === null ? [] : [call.deadline]));
      if (input.checkpointAt !== null) times.push(input.checkpointAt);
      return { type: 'rest', until: times.length === 0 ? null : Math.min(...times) };
    }
    case 'idle': {
      // Row 60: an archive that ended the turn and did not land session.archived is finished.
      if (context.closing || now >= input.idleArchiveAt) return { type: 'archive' };
      const until =
        input.checkpointAt === null
          ? input.idleArchiveAt
          : Math.min(input.idleArchiveAt, input.checkpointAt);
      return { type: 'rest', until };
    }
  }
}

/** The start of the UTC day after the one `at` falls in: when a day's usage is checkpointed. */
export function nextUtcMidnight(at: number): number {
  const day = 24 * 60 * 60 * 1000;
  return Math.floor(at / day) * day + day;
}

/** Row 50: the delay before attempt `failed + 1`, or null when `attempts` are spent. */
export function retryDelay(failed: number, attempts: number, backoffMs: number): number | null {
  if (failed >= attempts) return null;
  return Math.min(backoffMs * 2 ** (failed - 1), 60_000);
}
