import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import type { InspectionEvent, Snapshot, StateValue } from 'xstate';
import { transitionKey, walkMachine } from '../../scripts/statecharts/walk.ts';
import {
  sessionMachine,
  type SessionAnswer,
  type SessionEvent,
} from '../../src/machines/session.machine.ts';
import { RULES, initialModel, step, type Effect, type ModelStateName } from './session.model.ts';

const mostly = fc.integer({ min: 0, max: 4 }).map((n) => n > 0);
const often = fc.integer({ min: 0, max: 2 }).map((n) => n > 0);

const eventArb: fc.Arbitrary<SessionEvent> = fc.oneof(
  fc.record({
    type: fc.constant('session.requested' as const),
    now: fc.nat(),
    install: fc.constantFrom('install-a', 'install-b'),
    principal: often,
    valid: often,
    catalogs: fc.constantFrom('unchanged', 'changed', 'unreadable' as const),
  }),
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant('records.offered' as const),
      now: fc.nat(),
      attaches: mostly,
      accepted: mostly,
      key: fc.constantFrom('free', 'free', 'same', 'different' as const),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('archive.requested' as const),
      now: fc.nat(),
      by: fc.constantFrom('install', 'console', 'console', 'idle', 'install_deleted' as const),
      authorized: fc.boolean(),
    }),
  },
);

/** Runs that open first, and runs that start with no session. */
const runArb = fc
  .tuple(fc.boolean(), fc.array(eventArb, { maxLength: 30 }))
  .map(([openFirst, events]): SessionEvent[] =>
    openFirst
      ? [
          {
            type: 'session.requested',
            now: 0,
            install: 'install-a',
            principal: true,
            valid: true,
            catalogs: 'unchanged',
          },
          ...events,
        ]
      : events,
  );

function modelState(value: StateValue): ModelStateName {
  return value as ModelStateName;
}

describe('session machine (table 3.1)', () => {
  const rulesTaken = new Set<string>();
  const transitionsTaken = new Set<string>();
  const inspect = (event: InspectionEvent) => {
    if (event.type === '@xstate.microstep') {
      for (const t of event._transitions) transitionsTaken.add(transitionKey(t));
    }
  };

  /** One delivery, the host's way: restored from JSON, effects recorded, snapshot saved back. */
  function deliver(persisted: Snapshot<unknown> | undefined, event: SessionEvent) {
    const effects: Effect[] = [];
    const answers: SessionAnswer[] = [];
    const record = (name: string) => (_: unknown, params: unknown) =>
      void effects.push([name, params]);
    const logic = sessionMachine.provide({
      actions: {
        landOpened: record('landOpened'),
        cancelTurn: record('cancelTurn'),
        landArchived: record('landArchived'),
      },
    });
    const actor = createActor(logic, { snapshot: persisted, inspect });
    actor.on('session.answered', (e) => void answers.push(e.answer));
    actor.start();
    actor.send(event);
    const value = actor.getSnapshot().value;
    const saved = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as Snapshot<unknown>;
    actor.stop();
    return { effects, answers, value, saved };
  }

  function run(events: readonly SessionEvent[]): void {
    let persisted: Snapshot<unknown> | undefined;
    let model = initialModel;
    for (const event of events) {
      const expected = step(model, event);
      rulesTaken.add(expected.rule);
      const got = deliver(persisted, event);
      expect(got.answers).toEqual([expected.answer]);
      expect(modelState(got.value)).toBe(expected.next.state);
      expect(got.effects).toEqual(expected.effects);
      // 3.1 row 3: nothing lands on an archived session, and it never leaves `archived`.
      if (model.state === 'archived') {
        expect(['accepted', 'replayed']).not.toContain(got.answers[0]?.outcome);
        expect(got.effects).toEqual([]);
        expect(got.value).toBe('archived');
      }
      persisted = got.saved;
      model = expected.next;
    }
  }

  it('answers every run of opens, appends and archives as the model does', () => {
    fc.assert(fc.property(runArb, run), { numRuns: 500 });

    expect(RULES.filter((rule) => !rulesTaken.has(rule))).toEqual([]);
    const all = walkMachine(sessionMachine).transitions.map((t) => transitionKey(t.definition));
    expect(all.length).toBeGreaterThan(20);
    expect(all.filter((key) => !transitionsTaken.has(key))).toEqual([]);
  });
});
