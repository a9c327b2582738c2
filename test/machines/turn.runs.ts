/**
 * Runs of records for the turn machine's tests: abstract choices made concrete against the
 * independent model of part C (`turn.model.ts`), so runs look like real logs (a
 * `turn.started` when one is owed, outputs of the round in flight, answers to the calls
 * that are out) with stale and foreign records mixed in.
 */
import fc from 'fast-check';
import type { TurnEvent } from '../../src/machines/turn.machine.ts';
import { initialModel, step, type Model } from './turn.model.ts';

/** An abstract step, made concrete against the model when the run is played. */
export type Choice =
  | {
      readonly a: 'message' | 'archive' | 'other' | 'compact' | 'compacted' | 'started' | 'allow';
    }
  | { readonly a: 'output'; readonly calls: number; readonly stale: boolean }
  | { readonly a: 'failed'; readonly spent: boolean }
  | { readonly a: 'answer'; readonly completed: boolean; readonly stale: boolean }
  | { readonly a: 'cancel'; readonly which: 'null' | 'current' | 'other' }
  | { readonly a: 'ended'; readonly how: 'owed' | 'archived' | 'stale' };

const choiceArb: fc.Arbitrary<Choice> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ a: 'message' as const }) },
  { weight: 4, arbitrary: fc.constant({ a: 'started' as const }) },
  { weight: 4, arbitrary: fc.constant({ a: 'allow' as const }) },
  {
    weight: 5,
    arbitrary: fc.record({
      a: fc.constant('output' as const),
      calls: fc.nat(2),
      stale: fc.boolean().map((b) => b && Math.random() < 0.2),
    }),
  },
  { weight: 2, arbitrary: fc.record({ a: fc.constant('failed' as const), spent: fc.boolean() }) },
  {
    weight: 5,
    arbitrary: fc.record({
      a: fc.constant('answer' as const),
      completed: fc.boolean(),
      stale: fc.constant(false),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      a: fc.constant('answer' as const),
      completed: fc.boolean(),
      stale: fc.constant(true),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      a: fc.constant('cancel' as const),
      which: fc.constantFrom('null', 'current', 'other' as const),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      a: fc.constant('ended' as const),
      how: fc.constantFrom('owed', 'owed', 'archived', 'stale' as const),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ a: 'compact' as const }) },
  { weight: 2, arbitrary: fc.constant({ a: 'compacted' as const }) },
  { weight: 1, arbitrary: fc.constant({ a: 'other' as const }) },
  { weight: 1, arbitrary: fc.constant({ a: 'archive' as const }) },
);

/** The concrete record of `choice` at `cursor`, given the model before it. */
function concrete(choice: Choice, m: Model, cursor: number, lastCompaction: number): TurnEvent {
  const at = cursor * 10;
  const base = { cursor, at };
  const turn = m.turn ?? 999;
  switch (choice.a) {
    case 'message':
      return { ...base, type: 'message.submitted' };
    case 'started':
      return { ...base, type: 'turn.started', inputs: [cursor - 1] };
    case 'output':
      return {
        ...base,
        type: 'model.output',
        turn,
        round: choice.stale ? m.round + 5 : m.round,
        calls: Array.from({ length: choice.calls }, (_, i) => ({
          call: `c${cursor}-${i}`,
          tool: 't',
        })),
        stop: choice.calls > 0 ? 'tool_use' : 'end_turn',
        model: 'simulated',
        usage: { input: 3, output: 2 },
      };
    case 'failed':
      return {
        ...base,
        type: 'inference.failed',
        turn,
        retryIn: choice.spent ? null : 100,
        error: 'x',
      };
    case 'allow':
      return {
        ...base,
        type: 'invoke.allowed',
        turn,
        call: m.open.find((c) => !(c in m.allowed)) ?? 'nope',
        target: 'executor:x',
        timeout: 60_000,
      };
    case 'answer': {
      if (choice.completed) {
        const cause = choice.stale ? 0 : (Object.values(m.allowed)[0] ?? 0);
        return { ...base, type: 'invoke.completed', cause: cause === 0 ? null : cause };
      }
      const call = choice.stale ? 'nope' : (m.open.find((c) => !(c in m.allowed)) ?? 'nope');
      return { ...base, type: 'invoke.denied', turn, call };
    }
    case 'cancel':
      return {
        ...base,
        type: 'turn.cancel',
        turn: choice.which === 'null' ? null : choice.which === 'current' ? turn : turn + 1,
      };
    case 'ended':
      return {
        ...base,
        type: 'turn.ended',
        turn: choice.how === 'stale' ? turn + 1 : turn,
        reason: choice.how === 'archived' ? 'archived' : 'completed',
      };
    case 'compact':
      return { ...base, type: 'compaction.requested', turn, promptTokens: 2000 };
    case 'compacted':
      return {
        ...base,
        type: 'compaction.completed',
        requested: lastCompaction,
        through: cursor - 1,
        tokensAfter: 100,
        model: 'simulated',
        usage: { input: 1, output: 1 },
      };
    case 'other':
      return { ...base, type: 'record.other' };
    case 'archive':
      return { ...base, type: 'session.archived' };
  }
}

export const runArb = fc.tuple(
  fc.integer({ min: 1, max: 3 }),
  fc.array(choiceArb, { minLength: 1, maxLength: 60 }),
);

/** The records of a run, and the rules the model took on them. */
export function playRun(
  rounds: number,
  choices: readonly Choice[],
): { events: TurnEvent[]; rules: string[] } {
  const opened: TurnEvent = { type: 'session.opened', cursor: 1, at: 10, rounds, executor: null };
  const events: TurnEvent[] = [opened];
  const rules: string[] = [];
  // Each choice is made concrete against the model as it is before the record.
  let model = step(initialModel, opened).next;
  for (const choice of choices) {
    if (model.phase === 'ended') break;
    const event = concrete(choice, model, events.length + 1, model.compaction ?? 0);
    events.push(event);
    const outcome = step(model, event);
    rules.push(outcome.rule);
    model = outcome.next;
  }
  return { events, rules };
}
