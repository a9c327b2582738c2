/**
 * The planner's input read off a driver's session (`plan.ts` decides from it): the turn
 * state, the prompt where an inference is next, and the times of the durable timers.
 */
import type { DriverSession } from './driver-deps.ts';
import { plan, type Step } from './plan.ts';
import { checkpointDue } from './usage.ts';

/** What the planner needs beside the session. */
export interface PlanTimes {
  /** Row 61: a session idle this long (ms) is archived. */
  readonly idleArchiveMs: number;
  /** `at` of the first record not yet counted in usage; null when all are. */
  readonly firstUncounted: number | null;
  readonly now: number;
}

/** The driver's next step for `session`. */
export function planFor(session: DriverSession, times: PlanTimes): Step {
  const { state, provider, option } = session;
  const context = state.context;
  const { now } = times;
  // The prompt is measured only where `plan` reads it, before an inference: measuring
  // costs the length of the conversation, and a turn plans several steps.
  const measured = state.phase === 'inferring' && context.owed.length === 0;
  // §6.3: what came before the turn's first message can be summarised, once.
  const before = Math.min(...context.inputs, context.turn ?? Infinity) - 1;
  const through =
    measured && Number.isFinite(before) && state.transcript.hasItemsThrough(before) ? before : null;
  return plan({
    phase: state.phase,
    context,
    now,
    promptTokens: measured
      ? provider.promptTokens(state.basics.instructions, state.transcript.prompt())
      : 0,
    compactAt: option.compact_at,
    compactThrough: through,
    idleArchiveAt: context.lastAt + times.idleArchiveMs,
    checkpointAt: checkpointDue(times.firstUncounted, state.phase === 'ended', now),
  });
}
