/**
 * The claim machine against the independent table of 3.4 (`claim.model.ts`): runs of
 * claims (by the call's executor and by others), completions by each producer and clock
 * jumps around the deadline are fed to a live actor and to one restored from JSON before
 * every event (the host's way); after every event the answer, the state and the records
 * owed must match the model, and across the runs every rule of the model and every
 * transition of the machine must be taken.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import type { InspectionEvent, Snapshot } from 'xstate';
import { transitionKey, walkMachine } from '../../scripts/statecharts/walk.ts';
import {
  claimMachine,
  type ClaimEvent,
  type ClaimOutcome,
  type ClaimedRecord,
  type TimeoutRecord,
} from '../../src/machines/claim.machine.ts';
import {
  ALLOWED_AT,
  CALL,
  CAUSE,
  DEADLINE,
  EXECUTOR,
  RULES,
  TIMEOUT,
  initialModel,
  step,
  type ModelAnswer,
  type ModelEvent,
  type ModelRecord,
} from './claim.model.ts';

type Step =
  | { readonly kind: 'claim'; readonly addressed: boolean }
  | { readonly kind: 'complete'; readonly by: 'executor' | 'mcp' | 'service' }
  | { readonly kind: 'advance'; readonly ms: number };

const mostly = fc.integer({ min: 0, max: 4 }).map((n) => n > 0);

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('claim' as const), addressed: mostly }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('complete' as const),
      by: fc.constantFrom('executor' as const, 'mcp' as const, 'service' as const),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      // Small steps, and jumps that land just before, on and after the deadline.
      ms: fc.oneof(
        fc.integer({ min: 0, max: 5_000 }),
        fc.constantFrom(TIMEOUT - 1, TIMEOUT, TIMEOUT / 2),
        fc.integer({ min: 0, max: 2 * TIMEOUT }),
      ),
    }),
  },
);

const runArb = fc.array(stepArb, { maxLength: 30 });

const inertClock = { setTimeout: () => 0, clearTimeout: () => undefined };

function toModelEvent(s: Exclude<Step, { kind: 'advance' }>, now: number): ModelEvent {
  return s.kind === 'claim'
    ? { type: 'claim', now, addressed: s.addressed }
    : { type: 'completion', now, by: s.by };
}

function toMachineEvent(e: ModelEvent): ClaimEvent {
  if (e.type === 'completion') return { type: 'call.completed', now: e.now, by: e.by };
  return {
    type: 'claim.requested',
    now: e.now,
    // Part D: a token of another executor is not the call's addressee.
    executor: e.addressed ? EXECUTOR : 'other-exec',
    addressed: e.addressed,
    call: { cause: CAUSE, call: CALL, timeout: TIMEOUT, deadline: DEADLINE },
  };
}

/** The machine's answer as the route would answer it. */
function toModelAnswer(answers: readonly ClaimOutcome[]): ModelAnswer | 'many' {
  if (answers.length > 1) return 'many';
  const answer = answers[0];
  if (answer === undefined) return null;
  switch (answer.outcome) {
    case 'granted':
      return { attempt: answer.attempt, n: answer.claim, expires: answer.expires };
    case 'completed':
      return { attempt: 'completed' };
    case 'forbidden':
      return { forbidden: true };
  }
}

const fromClaimed = (r: ClaimedRecord): ModelRecord => ({
  kind: r.kind.name,
  idem: r.idem,
  producer: r.producer,
  body: r.body,
});

const fromTimeout = (r: TimeoutRecord): ModelRecord => ({
  kind: r.kind.name,
  idem: r.idem,
  producer: null,
  body: r.body,
});

describe('claim machine (table 3.4)', () => {
  const rulesTaken = new Set<string>();
  const transitionsTaken = new Set<string>();

  const inspect = (event: InspectionEvent) => {
    if (event.type === '@xstate.microstep') {
      for (const t of event._transitions) transitionsTaken.add(transitionKey(t));
    }
  };

  /** The machine with effects that record what they were asked to land. */
  function recording(owed: ModelRecord[]) {
    return claimMachine.provide({
      actions: {
        landClaimed: (_, params) => void owed.push(fromClaimed(params)),
        landTimeout: (_, params) => void owed.push(fromTimeout(params)),
      },
    });
  }

  /** Feeds `event` to an actor and collects what it answered and owed. */
  function deliver(
    snapshot: Snapshot<unknown> | undefined,
    event: ClaimEvent,
  ): { answers: ClaimOutcome[]; owed: ModelRecord[]; value: unknown; persisted: unknown } {
    const owed: ModelRecord[] = [];
    const answers: ClaimOutcome[] = [];
    const actor = createActor(recording(owed), { snapshot, clock: inertClock, inspect });
    actor.on('claim.answered', (e) => void answers.push(e.answer));
    actor.start();
    actor.send(event);
    const value = actor.getSnapshot().value;
    const persisted: unknown = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    actor.stop();
    return { answers, owed, value, persisted };
  }

  function run(steps: readonly Step[]): void {
    let now = ALLOWED_AT;
    const liveOwed: ModelRecord[] = [];
    const liveAnswers: ClaimOutcome[] = [];
    const live = createActor(recording(liveOwed), { inspect });
    live.on('claim.answered', (e) => void liveAnswers.push(e.answer));
    live.start();
    let persisted: Snapshot<unknown> | undefined;
    let model = initialModel;

    for (const s of steps) {
      if (s.kind === 'advance') {
        now += s.ms;
        continue;
      }
      const event = toModelEvent(s, now);
      const expected = step(model, event);
      rulesTaken.add(expected.rule);

      // The live actor.
      liveAnswers.length = 0;
      liveOwed.length = 0;
      live.send(toMachineEvent(event));
      expect(toModelAnswer(liveAnswers)).toEqual(expected.answer);
      expect(liveOwed).toEqual(expected.owed);
      expect(live.getSnapshot().value).toBe(stateOf(expected.next.state));
      expect(live.getSnapshot().context.claims).toBe(expected.next.claims);

      // The host's way: restored from JSON before every event, time only from `now`.
      const restored = deliver(persisted, toMachineEvent(event));
      expect(toModelAnswer(restored.answers)).toEqual(expected.answer);
      expect(restored.owed).toEqual(expected.owed);
      expect(restored.value).toBe(stateOf(expected.next.state));
      persisted = restored.persisted as Snapshot<unknown>;

      model = expected.next;
    }
    live.stop();
  }

  it('answers every run of claims, completions and clock jumps as the table does', () => {
    fc.assert(fc.property(runArb, run), {
      numRuns: 400,
      // The shortest runs to the rarer rules, so every run of the suite takes them.
      examples: [
        [
          [
            { kind: 'advance', ms: TIMEOUT },
            { kind: 'claim', addressed: true },
          ],
        ],
        [
          [
            { kind: 'claim', addressed: true },
            { kind: 'claim', addressed: false },
            { kind: 'advance', ms: TIMEOUT },
            { kind: 'claim', addressed: true },
            { kind: 'complete', by: 'service' },
            { kind: 'claim', addressed: false },
          ],
        ],
      ],
    });

    // Coverage: every documented rule and every transition of the machine was taken.
    expect(RULES.filter((rule) => !rulesTaken.has(rule))).toEqual([]);
    const all = walkMachine(claimMachine).transitions.map((t) => transitionKey(t.definition));
    expect(all).toHaveLength(11);
    expect(all.filter((key) => !transitionsTaken.has(key))).toEqual([]);
  });

  it('grants first, then again with a new claim number each time, then answers completed', () => {
    const owed: ModelRecord[] = [];
    const answers: ClaimOutcome[] = [];
    const actor = createActor(recording(owed)).start();
    actor.on('claim.answered', (e) => void answers.push(e.answer));
    const claim = (now: number): ClaimEvent => ({
      type: 'claim.requested',
      now,
      executor: EXECUTOR,
      addressed: true,
      call: { cause: CAUSE, call: CALL, timeout: TIMEOUT, deadline: DEADLINE },
    });
    actor.send(claim(ALLOWED_AT + 1_000));
    actor.send(claim(ALLOWED_AT + 2_000));
    actor.send({ type: 'call.completed', now: ALLOWED_AT + 3_000, by: 'executor' });
    actor.send(claim(ALLOWED_AT + 4_000));
    expect(answers).toEqual([
      { outcome: 'granted', attempt: 'first', claim: 1, expires: ALLOWED_AT + 91_000 },
      { outcome: 'granted', attempt: 'again', claim: 2, expires: ALLOWED_AT + 92_000 },
      { outcome: 'completed' },
    ]);
    expect(owed.map((r) => r.idem)).toEqual([`claim:${CAUSE}:1`, `claim:${CAUSE}:2`]);
    expect(actor.getSnapshot().context.completedBy).toBe('executor');
    actor.stop();
  });
});

/** The model's state names are the table's words; the machine's are its states. */
function stateOf(state: 'never_claimed' | 'claimed_open' | 'answered'): string {
  return { never_claimed: 'unclaimed', claimed_open: 'claimed', answered: 'answered' }[state];
}
