import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimulatedClock, createActor } from 'xstate';
import type { InspectionEvent, Snapshot } from 'xstate';
import { transitionKey, walkMachine } from '../../scripts/statecharts/walk.ts';
import {
  PROPOSAL_LIFETIME_MS,
  proposalMachine,
  type InstallEffect,
  type ProposalAnswer,
  type ProposalEvent,
} from '../../src/machines/proposal.machine.ts';
import {
  REQUEST,
  RULES,
  VENDOR,
  initialModel,
  settle,
  step,
  type ModelEvent,
  type ModelState,
} from './proposal.model.ts';

type Step =
  | { readonly kind: 'submit'; readonly update: boolean }
  | { readonly kind: 'poll'; readonly secretOk: boolean }
  | {
      readonly kind: 'consent';
      readonly owner: boolean;
      readonly resolves: boolean;
      readonly fits: boolean;
    }
  | { readonly kind: 'decline'; readonly owner: boolean }
  | { readonly kind: 'advance'; readonly ms: number };

const mostly = fc.integer({ min: 0, max: 4 }).map((n) => n > 0);

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('submit' as const), update: fc.boolean() }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('poll' as const), secretOk: mostly }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('consent' as const),
      owner: mostly,
      resolves: mostly,
      fits: mostly,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('decline' as const), owner: mostly }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      // Around the poll interval and its slow_down steps.
      ms: fc.oneof(
        fc.integer({ min: 0, max: 4_999 }),
        fc.integer({ min: 5_000, max: 20_000 }),
        fc.constantFrom(4_999, 5_000, 10_000),
      ),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      // Around the ten-minute lifetime.
      ms: fc.oneof(
        fc.constantFrom(PROPOSAL_LIFETIME_MS - 1, PROPOSAL_LIFETIME_MS),
        fc.integer({ min: 0, max: 700_000 }),
      ),
    }),
  },
);

/** Runs that start with a submission, and runs that start in `none`. */
const anyRunArb = fc
  .tuple(fc.boolean(), fc.boolean(), fc.array(stepArb, { maxLength: 40 }))
  .map(([submitFirst, update, steps]): Step[] =>
    submitFirst ? [{ kind: 'submit', update }, ...steps] : steps,
  );

/** Runs that cross the lifetime after a few steps, so `lapsed` is visited often. */
const lapsingRunArb = fc
  .tuple(fc.boolean(), fc.array(stepArb, { maxLength: 4 }), fc.array(stepArb, { maxLength: 12 }))
  .map(([update, before, after]): Step[] => [
    { kind: 'submit', update },
    ...before,
    { kind: 'advance', ms: PROPOSAL_LIFETIME_MS },
    ...after,
  ]);

const runArb = fc.oneof(anyRunArb, lapsingRunArb);

const SUBMIT: Step = { kind: 'submit', update: false };
const UPDATE: Step = { kind: 'submit', update: true };
const DECLINE: Step = { kind: 'decline', owner: true };
const GRANT: Step = { kind: 'consent', owner: true, resolves: true, fits: true };
const LAPSE: Step = { kind: 'advance', ms: PROPOSAL_LIFETIME_MS };
const POLL: Step = { kind: 'poll', secretOk: true };

/** Each caller's asks of a proposal as it stands: a non-owner's, the owner's, the vendor's. */
const EVERY_CALLER: readonly Step[] = [
  { kind: 'decline', owner: false },
  { kind: 'consent', owner: false, resolves: true, fits: true },
  DECLINE,
  GRANT,
  { kind: 'poll', secretOk: false },
  POLL,
];

const SECRET = 'secret-hash';
const EXISTING = 'install-existing';
const inertClock = { setTimeout: () => 0, clearTimeout: () => undefined };

function toModelEvent(s: Exclude<Step, { kind: 'advance' }>, now: number, n: number): ModelEvent {
  switch (s.kind) {
    case 'submit':
      return { type: 'proposal.submitted', now, install: s.update ? EXISTING : null };
    case 'poll':
      return { type: 'poll.requested', now, secretOk: s.secretOk };
    case 'consent':
      return { type: 'consent.given', now, ...s, install: `install-${n}`, key: `ik_${n}` };
    case 'decline':
      return { type: 'consent.declined', now, owner: s.owner };
  }
}

function toMachineEvent(e: ModelEvent): ProposalEvent {
  switch (e.type) {
    case 'proposal.submitted':
      return { ...e, request: REQUEST, vendor: VENDOR, secret: SECRET };
    case 'poll.requested':
      return { type: e.type, now: e.now, secret: e.secretOk ? SECRET : 'other-hash' };
    case 'consent.given':
      return {
        type: e.type,
        now: e.now,
        owner: e.owner,
        resolves: e.resolves,
        fits: e.fits,
        grant: { install: e.install, key: e.key, tenant: 'tenant', config: { inference: 'x' } },
      };
    case 'consent.declined':
      return e;
  }
}

/** What the effects should have been asked to do for a grant the model took. */
function expectedEffect(
  rule: string,
  before: ModelState,
  e: ModelEvent,
): [string, InstallEffect][] {
  if (e.type !== 'consent.given' || !rule.startsWith('pending.consent.grant_')) {
    return [];
  }
  const update = rule === 'pending.consent.grant_update';
  return [
    [
      update ? 'updateInstall' : 'createInstall',
      {
        request: REQUEST,
        vendor: VENDOR,
        install: update ? (before.install ?? '') : e.install,
        key: update ? null : e.key,
        tenant: 'tenant',
        config: { inference: 'x' },
      },
    ],
  ];
}

describe('proposal machine (table 3.2)', () => {
  const rulesTaken = new Set<string>();
  const transitionsTaken = new Set<string>();

  const inspect = (event: InspectionEvent) => {
    if (event.type === '@xstate.microstep') {
      for (const t of event._transitions) transitionsTaken.add(transitionKey(t));
    }
  };

  /** The machine with effects that record what they were asked. */
  function recording(effects: [string, InstallEffect][]) {
    return proposalMachine.provide({
      actions: {
        createInstall: (_, params) => void effects.push(['createInstall', params]),
        updateInstall: (_, params) => void effects.push(['updateInstall', params]),
      },
    });
  }

  function run(steps: readonly Step[]): void {
    const clock = new SimulatedClock();
    clock.set(Date.UTC(2026, 0, 1));
    const liveEffects: [string, InstallEffect][] = [];
    const live = createActor(recording(liveEffects), { clock, inspect });
    const liveAnswers: ProposalAnswer[] = [];
    live.on('proposal.answered', (e) => void liveAnswers.push(e.answer));
    live.start();
    let persisted: Snapshot<unknown> | undefined;
    let model = initialModel;

    steps.forEach((s, n) => {
      if (s.kind === 'advance') {
        // The live actor's `after: lifetime` lapses it on time, without an event.
        clock.increment(s.ms);
        const settled = settle(model, clock.now());
        if (settled.lapsed) rulesTaken.add('pending.lapse');
        model = settled.state;
        expect(live.getSnapshot().value).toBe(model.state);
        return;
      }
      const event = toModelEvent(s, clock.now(), n);
      const expected = step(model, event);
      rulesTaken.add(expected.rule);
      if (expected.lapsed) rulesTaken.add('pending.lapse');
      const effects = expectedEffect(expected.rule, model, event);

      // The live actor, with timers.
      liveAnswers.length = 0;
      liveEffects.length = 0;
      live.send(toMachineEvent(event));
      expect(liveAnswers).toEqual([expected.answer]);
      expect(live.getSnapshot().value).toBe(expected.next.state);
      expect(liveEffects).toEqual(effects);

      // The host's way: restored from JSON before every event, time only from `now`.
      const restoredEffects: [string, InstallEffect][] = [];
      const restoredAnswers: ProposalAnswer[] = [];
      const restored = createActor(recording(restoredEffects), {
        snapshot: persisted,
        clock: inertClock,
        inspect,
      });
      restored.on('proposal.answered', (e) => void restoredAnswers.push(e.answer));
      restored.start();
      restored.send(toMachineEvent(event));
      expect(restoredAnswers).toEqual([expected.answer]);
      expect(restored.getSnapshot().value).toBe(expected.next.state);
      expect(restoredEffects).toEqual(effects);
      persisted = JSON.parse(JSON.stringify(restored.getPersistedSnapshot())) as Snapshot<unknown>;
      restored.stop();

      model = expected.next;
    });

    // Row 30: the live actor forgets the receipt key when the lifetime ends.
    const context = live.getSnapshot().context;
    if (model.state === 'granted') {
      expect(context.key).toBe(clock.now() >= model.expires ? null : model.key);
    }
    live.stop();
  }

  it('answers every run of proposals, polls, consents, declines and clock jumps as the model does', () => {
    fc.assert(fc.property(runArb, run), {
      numRuns: 400,
      // The rarest rules, taken by every run of the suite rather than by chance: what no
      // proposal yet, a declined, a granted and a lapsed one answer to each caller, owner
      // or not (a granted proposal's decline by a non-owner was once missed by chance).
      examples: [
        [[...EVERY_CALLER, SUBMIT]],
        [[SUBMIT, DECLINE, ...EVERY_CALLER, UPDATE]],
        [[SUBMIT, GRANT, ...EVERY_CALLER, UPDATE, LAPSE, POLL]],
        [[UPDATE, LAPSE, ...EVERY_CALLER, SUBMIT]],
      ],
    });

    // Coverage: every documented rule and every transition of the machine was taken.
    expect(RULES.filter((rule) => !rulesTaken.has(rule))).toEqual([]);
    const all = walkMachine(proposalMachine).transitions.map((t) => transitionKey(t.definition));
    expect(all.length).toBeGreaterThan(20);
    expect(all.filter((key) => !transitionsTaken.has(key))).toEqual([]);
  });
});
