/**
 * The log actor: an actor driven by a log's records on the host's code (`activation.ts`),
 * as the turn is. Its version is the cursor of the last record taken, a record comes in
 * cursor order once, its saved snapshot restores at its cursor, and a machine that starts
 * effects or emits (which a replay would do again) is refused. Every actor in `src/` is
 * started and sent its events in one module.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { assign, emit, setup } from 'xstate';
import { describe, expect, it } from 'vitest';
import type { ActorKind, EffectSink } from '../../src/actors/actor-type.ts';
import { LogActor } from '../../src/actors/log-actor.ts';

interface Landed {
  readonly type: 'landed' | 'effect' | 'emit' | 'throw';
  readonly cursor: number;
  readonly n: number;
}

/** A tally of the records' `n`, with the head, a late state after 10 ms, and misbehaviours on demand. */
function tally(effect: EffectSink) {
  return setup({
    types: { context: {} as { head: number; sum: number }, events: {} as Landed },
    actions: {
      add: assign(({ context, event }) => ({ head: event.cursor, sum: context.sum + event.n })),
      start: () => {
        effect(Promise.resolve());
      },
      fail: () => {
        throw new Error('the action failed');
      },
    },
  }).createMachine({
    id: 'tally',
    initial: 'open',
    context: { head: 0, sum: 0 },
    states: {
      open: {
        after: { 10: 'late' },
        on: {
          landed: { actions: 'add' },
          effect: { actions: ['add', 'start'] },
          emit: { actions: ['add', emit({ type: 'noticed' })] },
          throw: { actions: 'fail' },
        },
      },
      late: {},
    },
  });
}

const kind: ActorKind<ReturnType<typeof tally>> = { type: 'tally', logic: tally };

const landed = (cursor: number, n = cursor): Landed => ({ type: 'landed', cursor, n });

describe('an actor driven by a log', () => {
  it('takes each record once, in cursor order, its version the cursor of the last', () => {
    const actor = new LogActor(kind, 'log-1');
    expect(actor.cursor).toBe(0);
    for (const cursor of [1, 2, 3]) {
      expect(actor.next(cursor)).toBe(true);
      actor.take(cursor, landed(cursor));
    }
    expect(actor.cursor).toBe(3);
    expect(actor.snapshot.context).toEqual({ head: 3, sum: 6 });
    // Came twice (a read and a tail): skipped. Past the next one: the gap is read first.
    expect(actor.next(2)).toBe(false);
    expect(() => actor.next(5)).toThrow(/record 5 of tally log-1 arrived before 4/);
    expect(() => {
      actor.take(5, landed(5));
    }).toThrow(/taken at 3/);
    expect(actor.cursor).toBe(3);
    expect(actor.snapshot.context.sum).toBe(6);
  });

  it('restores a saved snapshot at its cursor to what a replay from cursor 1 reaches', () => {
    const records = Array.from({ length: 9 }, (_, i) => landed(i + 1, (i * 7) % 5));
    const lived = new LogActor(kind, 'log-2');
    for (const record of records.slice(0, 4)) lived.take(record.cursor, record);
    const saved = JSON.parse(JSON.stringify(lived.persisted())) as unknown;
    const restored = new LogActor(kind, 'log-2', { snapshot: saved, cursor: lived.cursor });
    expect(restored.cursor).toBe(4);
    for (const record of records.slice(4)) restored.take(record.cursor, record);

    const replayed = new LogActor(kind, 'log-2');
    for (const record of records) replayed.take(record.cursor, record);
    expect(restored.snapshot.value).toEqual(replayed.snapshot.value);
    expect(restored.snapshot.context).toEqual(replayed.snapshot.context);
    expect(restored.cursor).toBe(replayed.cursor);
  });

  it('runs on the inert clock of the host: time reaches it only through its records', async () => {
    const actor = new LogActor(kind, 'log-3');
    actor.take(1, landed(1));
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(actor.snapshot.value).toBe('open');
  });

  it('refuses a record that starts an effect or emits an event, which a replay would redo', () => {
    for (const type of ['effect', 'emit'] as const) {
      const actor = new LogActor(kind, `log-${type}`);
      actor.take(1, landed(1));
      expect(() => {
        actor.take(2, { type, cursor: 2, n: 1 });
      }).toThrow(/started an effect or emitted an event/);
      expect(actor.cursor).toBe(1);
    }
  });

  it('fails the take with the error of an action that throws, and moves no version', () => {
    const actor = new LogActor(kind, 'log-4');
    actor.take(1, landed(1));
    expect(() => {
      actor.take(2, { type: 'throw', cursor: 2, n: 0 });
    }).toThrow('the action failed');
    expect(actor.cursor).toBe(1);
  });

  it('refuses a saved snapshot of a state its machine no longer has', () => {
    const lived = new LogActor(kind, 'log-5');
    lived.take(1, landed(1));
    const saved = { ...(lived.persisted() as object), value: 'gone' };
    expect(() => new LogActor(kind, 'log-5', { snapshot: saved, cursor: 1 })).toThrow();
  });
});

describe('one runtime for every actor', () => {
  it('starts actors and sends them events in src/actors/activation.ts only', async () => {
    const src = path.resolve(import.meta.dirname, '../../src');
    const files = (await readdir(src, { recursive: true })).filter((f) => f.endsWith('.ts'));
    const starting: string[] = [];
    const sending: string[] = [];
    for (const file of files) {
      const text = await readFile(path.join(src, file), 'utf8');
      if (/\bcreateActor\(/.test(text)) starting.push(file);
      if (/\bactor\.send\(/.test(text)) sending.push(file);
    }
    const activation = path.join('actors', 'activation.ts');
    expect(starting).toEqual([activation]);
    expect(sending).toEqual([activation]);
  });
});
