/**
 * The turn machine against the independent table of part C (`turn.model.ts`): runs of
 * records, each chosen against the model's state so runs look like real logs (a
 * `turn.started` when one is owed, outputs of the round in flight, answers to the calls
 * that are out) with stale and foreign records mixed in, are fed to both; after every
 * record the machine's phase and the context the chart decides must match the model, and
 * across the runs every rule of the model must be taken.
 */
import fc from 'fast-check';
import { createActor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { queued, turnMachine } from '../../src/machines/turn.machine.ts';
import { initialModel, RULES, step } from './turn.model.ts';
import { playRun, runArb } from './turn.runs.ts';

describe('turn machine (decisions part C)', () => {
  it('keeps its context to fewer than 20 fields, which V8 still copies as a fast object', () => {
    // XState's assign copies the context with Object.assign({}, …); from 20 properties on,
    // V8 makes that copy a dictionary object and every applied record pays for it.
    const live = createActor(turnMachine).start();
    live.send({ type: 'session.opened', cursor: 1, at: 1, rounds: 4, executor: null });
    expect(Object.keys(live.getSnapshot().context).length).toBeLessThan(20);
  });

  it('moves through every run of records as the independent table does, and takes every rule', () => {
    const taken = new Set<string>();
    fc.assert(
      fc.property(runArb, ([rounds, choices]) => {
        const { events, rules } = playRun(rounds, choices);
        for (const rule of rules) taken.add(rule);
        // The machine, record by record, against a fresh run of the model.
        const live = createActor(turnMachine).start();
        let m = initialModel;
        for (const event of events) {
          live.send(event);
          m = step(m, event).next;
          const snapshot = live.getSnapshot();
          const c = snapshot.context;
          expect(snapshot.value).toBe(m.phase);
          if (m.phase === 'ended') continue;
          expect(c.turn).toBe(m.turn);
          if (m.turn !== null) expect(c.round).toBe(m.round);
          expect(
            c.owed.map((o) => (o.kind === 'turn.started' ? 'start' : `end:${o.reason}`)),
          ).toEqual(m.owed);
          const unanswered = c.calls.filter((x) => x.state === 'open' || x.state === 'allowed');
          expect(unanswered.map((x) => x.call)).toEqual(m.open);
          expect(
            Object.fromEntries(
              c.calls.filter((x) => x.state === 'allowed').map((x) => [x.call, x.cause]),
            ),
          ).toEqual(m.allowed);
          expect(c.compaction).toBe(m.compaction);
          expect(c.closing).toBe(m.closing);
          expect(queued(c.queue)).toEqual(m.queue);
        }
      }),
      {
        numRuns: 600,
        // The shortest runs to the rarest rules, so every run of the suite takes them.
        examples: [
          [
            [
              2,
              [
                { a: 'message' },
                { a: 'started' },
                { a: 'message' },
                { a: 'compact' },
                { a: 'compacted' },
                { a: 'failed', spent: false },
                { a: 'output', calls: 2, stale: false },
                { a: 'answer', completed: false, stale: false },
                { a: 'allow' },
                { a: 'answer', completed: true, stale: false },
                { a: 'output', calls: 0, stale: false },
                { a: 'message' },
                { a: 'ended', how: 'owed' },
                { a: 'started' },
                { a: 'failed', spent: true },
                { a: 'ended', how: 'owed' },
                { a: 'started' },
                { a: 'output', calls: 0, stale: false },
                { a: 'ended', how: 'owed' },
                { a: 'cancel', which: 'null' },
                { a: 'message' },
                { a: 'started' },
                { a: 'output', calls: 1, stale: false },
                { a: 'answer', completed: false, stale: false },
                { a: 'output', calls: 1, stale: false },
                { a: 'answer', completed: false, stale: false },
                { a: 'ended', how: 'owed' },
                { a: 'message' },
                { a: 'started' },
                { a: 'ended', how: 'archived' },
                { a: 'archive' },
              ],
            ],
          ],
          [
            [
              1,
              [
                { a: 'message' },
                { a: 'started' },
                { a: 'output', calls: 1, stale: false },
                { a: 'answer', completed: false, stale: false },
              ],
            ],
          ],
          [
            [
              2,
              [
                { a: 'message' },
                { a: 'started' },
                { a: 'compact' },
                { a: 'cancel', which: 'null' },
              ],
            ],
          ],
          [
            [
              2,
              [
                { a: 'message' },
                { a: 'started' },
                { a: 'output', calls: 1, stale: false },
                { a: 'cancel', which: 'current' },
              ],
            ],
          ],
        ],
      },
    );
    expect(RULES.filter((rule) => !taken.has(rule))).toEqual([]);
  });
});
