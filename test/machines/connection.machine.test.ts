import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createActor, fromPromise, waitFor, type InspectionEvent } from 'xstate';
import { transitionKey, walkMachine } from '../../scripts/statecharts/walk.ts';
import {
  connectionMachine,
  type ConnectionConfig,
  type ConnectionContext,
  type ConnectionEvent,
  type LinkResult,
} from '../../src/machines/connection.machine.ts';
import {
  RULES,
  initialModel,
  table,
  type AuthKind,
  type Effect,
  type ModelEvent,
  type ModelState,
  type ProbeAnswer,
} from './connection.model.ts';

const config = (endpoint: string, credential: string | null): ConnectionConfig => ({
  endpoint,
  credential,
  result_limit: null,
  timeout: null,
  return_to: 'https://console.example.test/connections',
});

/** Few configs, so that a PUT often repeats the stored one (row 46). */
const configArb = fc.constantFrom(
  config('http://127.0.0.1:4001/mcp', null),
  config('http://127.0.0.1:4001/mcp', 'token'),
  config('http://127.0.0.1:4002/mcp', null),
);
const digestArb = fc.constantFrom('a'.repeat(64), 'b'.repeat(64));
const urlArb = fc.nat(99).map((n) => `https://as.example.test/authorize?state=s${n}`);
const answerArb: fc.Arbitrary<ProbeAnswer> = fc.oneof(
  fc.record({
    kind: fc.constant('linked' as const),
    authKind: fc.constantFrom<AuthKind>('none', 'bearer', 'oauth'),
    digest: digestArb,
  }),
  fc.record({ kind: fc.constant('authorizing' as const), url: urlArb }),
  fc.record({ kind: fc.constant('fails' as const) }),
);
const eventArb: fc.Arbitrary<ModelEvent> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      type: fc.constant('link.requested' as const),
      config: configArb,
      answer: answerArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant('authorize.requested' as const), answer: answerArb }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ type: fc.constant('callback.received' as const), answer: answerArb }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('callback.refused' as const) }) },
  { weight: 2, arbitrary: fc.record({ type: fc.constant('token.refused' as const), url: urlArb }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('unlink.requested' as const) }) },
);
/** An event, and maybe another one sent while the first one's probe is under way. */
const stepArb = fc.record({
  event: eventArb,
  interrupt: fc.option(eventArb, { freq: 4, nil: undefined }),
});
type Step = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

/** A finite alphabet of the events above, for the breadth-first search below. */
function alphabet(): ModelEvent[] {
  const configs = [
    config('http://127.0.0.1:4001/mcp', null),
    config('http://127.0.0.1:4001/mcp', 'token'),
    config('http://127.0.0.1:4002/mcp', null),
  ];
  const answers: ProbeAnswer[] = [
    ...(['none', 'bearer', 'oauth'] as const).flatMap((authKind) =>
      ['a'.repeat(64), 'b'.repeat(64)].map((digest) => ({
        kind: 'linked' as const,
        authKind,
        digest,
      })),
    ),
    { kind: 'authorizing', url: 'https://as.example.test/authorize?state=s1' },
    { kind: 'fails' },
  ];
  return [
    ...configs.flatMap((c) =>
      answers.map((answer) => ({ type: 'link.requested' as const, config: c, answer })),
    ),
    ...answers.map((answer) => ({ type: 'authorize.requested' as const, answer })),
    ...answers.map((answer) => ({ type: 'callback.received' as const, answer })),
    { type: 'callback.refused' },
    { type: 'token.refused', url: 'https://as.example.test/authorize?state=s2' },
    { type: 'unlink.requested' },
  ];
}

/**
 * For every rule of the model, the shortest run that takes it, found by walking the model
 * breadth first. Fed to fast-check as examples, so the coverage check never depends on
 * chance: some rules (row 46's `unchanged`, a failed fresh URL on a linked connection)
 * need two or three particular events in a row.
 */
function coveringRuns(): Step[][] {
  const events = alphabet();
  const found = new Map<string, Step[]>();
  let frontier: { model: ModelState; run: Step[] }[] = [{ model: initialModel, run: [] }];
  const seen = new Set<string>([JSON.stringify(initialModel)]);
  for (let depth = 0; depth < 5 && found.size < RULES.length; depth += 1) {
    const next: typeof frontier = [];
    for (const { model, run } of frontier) {
      for (const event of events) {
        const expected = table[model.state][event.type](model, event);
        const steps = [...run, { event, interrupt: undefined }];
        if (!found.has(expected.rule)) found.set(expected.rule, steps);
        // While this event's probe runs, each kind of request is ignored (`probing` rules).
        if (expected.effect !== null) {
          for (const interrupt of events) {
            const ignored = table.probing[interrupt.type](model, interrupt).rule;
            if (!found.has(ignored)) found.set(ignored, [...run, { event, interrupt }]);
          }
        }
        const key = JSON.stringify(expected.next);
        if (!seen.has(key)) {
          seen.add(key);
          next.push({ model: expected.next, run: steps });
        }
      }
    }
    frontier = next;
  }
  return [...found.values()];
}

function toMachineEvent(e: ModelEvent): ConnectionEvent {
  switch (e.type) {
    case 'link.requested':
      return { type: e.type, config: e.config };
    case 'callback.received':
      return { type: e.type, code: 'code', state: 'state' };
    case 'callback.refused':
      return { type: e.type, error: 'access_denied' };
    case 'token.refused':
      return { type: e.type, authorize: e.url };
    default:
      return { type: e.type };
  }
}

function toResult(answer: ProbeAnswer): LinkResult {
  if (answer.kind === 'linked') {
    return {
      status: 'linked',
      auth: { kind: answer.authKind },
      catalog: { tools: [], digest: answer.digest, captured: 1 },
    };
  }
  if (answer.kind === 'authorizing') {
    return { status: 'authorizing', auth: { kind: 'oauth' }, authorize: answer.url };
  }
  throw new Error('the server could not be reached');
}

/** The stored connection as the edge would restore it from the model. */
function contextOf(m: ModelState): ConnectionContext {
  return {
    config: m.config,
    auth: m.authKind === null ? null : { kind: m.authKind },
    catalog: m.digest === null ? null : { tools: [], digest: m.digest, captured: 0 },
    authorize: m.authorize,
    probe: null,
    outcome: null,
    failure: null,
  };
}

function modelOf(context: ConnectionContext, state: string): ModelState {
  return {
    state: state as ModelState['state'],
    config: context.config,
    authKind: context.auth?.kind ?? null,
    digest: context.catalog?.digest ?? null,
    authorize: context.authorize,
  };
}

describe('connection machine (table 3.3)', () => {
  const rulesTaken = new Set<string>();
  const transitionsTaken = new Set<string>();
  const inspect = (event: InspectionEvent) => {
    if (event.type === '@xstate.microstep') {
      for (const t of event._transitions) transitionsTaken.add(transitionKey(t));
    }
  };

  /** The machine with effects that record their input and answer what the step scripted. */
  function scripted(
    effects: Effect[],
    answer: { current: ProbeAnswer },
    gate: { current: Promise<void> },
  ) {
    return connectionMachine.provide({
      actors: {
        catalogReader: fromPromise(async ({ input }) => {
          effects.push({ actor: 'catalogReader', purpose: input.purpose, config: input.config });
          await gate.current;
          return toResult(answer.current);
        }),
        authorizer: fromPromise(async ({ input }) => {
          effects.push({ actor: 'authorizer', config: input.config });
          expect([input.code, input.state]).toEqual(['code', 'state']);
          await gate.current;
          return toResult(answer.current);
        }),
      },
    });
  }

  /** Sends one step to an actor restored from `m`, as the edge does, and checks the model's cells. */
  async function runStep(
    m: ModelState,
    step: { event: ModelEvent; interrupt: ModelEvent | undefined },
  ) {
    const expected = table[m.state][step.event.type](m, step.event);
    rulesTaken.add(expected.rule);
    const effects: Effect[] = [];
    const answer = {
      current: 'answer' in step.event ? step.event.answer : ({ kind: 'fails' } as const),
    };
    let release: () => void = () => undefined;
    const gate = { current: new Promise<void>((resolve) => (release = resolve)) };
    const logic = scripted(effects, answer, gate);
    const actor = createActor(logic, {
      snapshot: logic.resolveState({ value: m.state, context: contextOf(m) }),
      inspect,
    });
    actor.start();
    actor.send(toMachineEvent(step.event));
    if (step.interrupt !== undefined && actor.getSnapshot().matches('probing')) {
      // Every request that arrives while probing is ignored.
      const during = actor.getSnapshot();
      const ignored = table.probing[step.interrupt.type](m, step.interrupt);
      rulesTaken.add(ignored.rule);
      actor.send(toMachineEvent(step.interrupt));
      expect(actor.getSnapshot().value).toEqual(during.value);
      expect(actor.getSnapshot().context).toEqual(during.context);
      expect(effects).toHaveLength(1);
    }
    release();
    const rested = await waitFor(actor, (s) => !s.matches('probing'));
    const { context, value } = rested;
    if (typeof value !== 'string') throw new Error('a resting machine is in a leaf state');
    expect(effects).toEqual(expected.effect === null ? [] : [expected.effect]);
    expect(value).toBe(expected.next.state);
    expect(modelOf(context, value)).toEqual(expected.next);
    expect(context.outcome).toBe(expected.outcome);
    expect(context.failure !== null).toBe(expected.failed);
    expect(context.probe).toBeNull();
    actor.stop();
    return expected.next;
  }

  it('moves every run of puts, callbacks, refusals and deletes as the model does', async () => {
    const covering = coveringRuns();
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { maxLength: 14 }), async (steps) => {
        let model = initialModel;
        for (const step of steps) model = await runStep(model, step);
      }),
      {
        // Examples count toward numRuns: 300 random runs besides them.
        numRuns: 300 + covering.length,
        examples: covering.map((run) => [run]),
      },
    );

    // Coverage: every documented rule and every transition of the machine was taken.
    expect(RULES.filter((rule) => !rulesTaken.has(rule))).toEqual([]);
    const all = walkMachine(connectionMachine).transitions.map((t) => transitionKey(t.definition));
    expect(all.length).toBeGreaterThan(20);
    expect(all.filter((key) => !transitionsTaken.has(key))).toEqual([]);
  });

  it('keeps one actor across a whole link, relink and re-authorization', async () => {
    const effects: Effect[] = [];
    const answer: { current: ProbeAnswer } = {
      current: { kind: 'authorizing', url: 'https://as.example.test/a1' },
    };
    const gate = { current: Promise.resolve() };
    const actor = createActor(scripted(effects, answer, gate)).start();
    const rest = () => waitFor(actor, (s) => !s.matches('probing'));
    const put = config('http://127.0.0.1:4001/mcp', null);

    actor.send({ type: 'link.requested', config: put });
    expect((await rest()).context).toMatchObject({
      outcome: 'created',
      authorize: 'https://as.example.test/a1',
    });
    answer.current = { kind: 'linked', authKind: 'oauth', digest: 'a'.repeat(64) };
    actor.send({ type: 'callback.received', code: 'code', state: 'state' });
    expect((await rest()).value).toBe('linked');
    actor.send({ type: 'link.requested', config: put });
    expect((await rest()).context.outcome).toBe('unchanged');
    actor.send({ type: 'token.refused', authorize: 'https://as.example.test/a2' });
    const refused = actor.getSnapshot();
    expect(refused.value).toBe('authorizing');
    expect(refused.context.catalog?.digest).toBe('a'.repeat(64));
    expect(effects.map((e) => e.actor)).toEqual(['catalogReader', 'authorizer', 'catalogReader']);
    actor.stop();
  });
});
