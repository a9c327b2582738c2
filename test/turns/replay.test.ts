/**
 * Decisions part C, "it rebuilds by replay": a session's turn state is a function of its
 * log. Any run of records (`turn.runs.ts`), written as the stored records the log holds,
 * is fed to one state as a live driver meets it (one record at a time, duplicates from a
 * tail and a read racing, catch-ups in pages) and to a fresh state all at once from
 * cursor 1: both reach the same machine snapshot and the same prompt. A state saved at
 * any cursor and restored (`state-snapshot.ts`) reaches it too once it has taken the rest.
 * The turn actor in each is a `LogActor` (`src/actors/log-actor.ts`): started and sent its
 * records by the code every actor runs on, its version the cursor of the last record.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { TurnEvent } from '../../src/machines/turn.types.ts';
import type { StoredRecord } from '../../src/storage/log-store.ts';
import { SessionState, type SessionStateData } from '../../src/turns/session-state.ts';
import { runArb, playRun } from '../machines/turn.runs.ts';

const STREAM = 'a'.repeat(72);

/** The body a record of `event`'s kind carries (part B), as far as the event says. */
function bodyOf(event: TurnEvent): unknown {
  switch (event.type) {
    case 'session.opened':
      return {
        rounds: event.rounds,
        executor: null,
        instructions: 'Be brief.',
        tools: [],
        params: {},
      };
    case 'message.submitted':
      return { text: `message ${event.cursor}` };
    case 'turn.cancel':
      return { turn: event.turn };
    case 'turn.started':
      return { inputs: event.inputs, rounds: 2 };
    case 'model.output':
      return {
        turn: event.turn,
        round: event.round,
        text: `answer ${event.cursor}`,
        tool_calls: event.calls.map((c) => ({
          id: c.call,
          name: c.tool,
          evidence: {},
          args: { n: 1 },
        })),
        stop: event.stop,
        model: event.model,
        usage: event.usage,
      };
    case 'inference.failed':
      return {
        turn: event.turn,
        round: 1,
        attempt: 1,
        retry_in: event.retryIn,
        error: event.error,
      };
    case 'invoke.denied':
      return {
        turn: event.turn,
        call: event.call,
        tool: 't',
        reason: 'no_executor',
        item: null,
        evidence: {},
      };
    case 'invoke.allowed':
      return {
        turn: event.turn,
        cause: event.cursor - 1,
        call: event.call,
        tool: 't',
        target: event.target,
        args: { n: 1 },
        evidence: {},
        timeout: event.timeout,
        result_limit: 65_536,
      };
    case 'invoke.completed':
      return {
        ok: true,
        result: { content: [{ type: 'text', text: `result ${event.cursor}` }] },
        error: null,
        truncated: false,
      };
    case 'compaction.requested':
      return {
        turn: event.turn,
        prompt_tokens: event.promptTokens,
        compact_at: 1024,
        through: event.cursor - 1,
      };
    case 'compaction.completed':
      return {
        requested: event.requested,
        through: event.through,
        summary: `summary ${event.cursor}`,
        tokens_before: 2000,
        tokens_after: event.tokensAfter,
        usage: event.usage,
        model: event.model,
      };
    case 'turn.ended':
      return { turn: event.turn, reason: event.reason, rounds: 1, usage: {}, error: null };
    case 'session.archived':
      return { by: 'install' };
    case 'record.other':
      return { note: 'x' };
  }
}

function stored(event: TurnEvent): StoredRecord {
  const body = JSON.stringify(bodyOf(event));
  return {
    envelope: {
      at: event.at,
      cursor: event.cursor,
      idem:
        event.type === 'invoke.completed' && event.cause !== null ? `call:${event.cause}` : null,
      kind: { name: event.type === 'record.other' ? 'app.note' : event.type, version: 1 },
      producer: 'service:turn',
      size: Buffer.byteLength(body),
      stream: STREAM,
      to: null,
    },
    body,
  };
}

describe('a session turn state rebuilt from its log', () => {
  it('reaches the snapshot and prompt of the state that lived through the records', () => {
    const key = randomBytes(32);
    fc.assert(
      fc.property(
        runArb,
        fc.array(fc.nat(4), { minLength: 80, maxLength: 80 }),
        ([rounds, choices], pages) => {
          const records = playRun(rounds, choices).events.map(stored);
          const lived = new SessionState(STREAM, key);
          // As a driver meets them: pages of records, each page sometimes delivered twice.
          let next = 0;
          for (const page of pages) {
            if (next >= records.length) break;
            const batch = records.slice(next, next + page + 1);
            for (const record of batch) lived.apply(record);
            if (page % 2 === 0) for (const record of batch) expect(lived.apply(record)).toBe(false);
            next += batch.length;
          }
          for (const record of records.slice(next)) lived.apply(record);

          const replayed = new SessionState(STREAM, key);
          for (const record of records) replayed.apply(record);
          expect(replayed.snapshot.value).toEqual(lived.snapshot.value);
          expect(replayed.snapshot.context).toEqual(lived.snapshot.context);
          expect(replayed.transcript.prompt()).toEqual(lived.transcript.prompt());
          expect(replayed.head).toBe(records.length);
          // The actor's version is the machine's own head.
          expect(lived.head).toBe(lived.context.head);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('restores a state saved at any cursor to the state the full replay reaches', () => {
    const key = randomBytes(32);
    fc.assert(
      fc.property(runArb, fc.nat(), ([rounds, choices], cut) => {
        const records = playRun(rounds, choices).events.map(stored);
        const at = cut % (records.length + 1);
        const before = new SessionState(STREAM, key);
        for (const record of records.slice(0, at)) before.apply(record);
        // Through JSON, as the work store keeps it.
        const saved = JSON.parse(JSON.stringify(before.data())) as SessionStateData;
        const restored = new SessionState(STREAM, key, saved);
        expect(restored.head).toBe(at);
        for (const record of records.slice(at)) restored.apply(record);

        const replayed = new SessionState(STREAM, key);
        for (const record of records) replayed.apply(record);
        expect(restored.snapshot.value).toEqual(replayed.snapshot.value);
        expect(restored.snapshot.context).toEqual(replayed.snapshot.context);
        expect(restored.basics).toEqual(replayed.basics);
        expect(restored.transcript.prompt()).toEqual(replayed.transcript.prompt());
        expect(restored.transcript.data()).toEqual(replayed.transcript.data());
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a saved state whose machine snapshot the turn machine cannot restore', () => {
    const key = randomBytes(32);
    const state = new SessionState(STREAM, key);
    for (const record of playRun(1, [{ a: 'message' }]).events.map(stored)) state.apply(record);
    const data = JSON.parse(JSON.stringify(state.data())) as SessionStateData;
    expect(new SessionState(STREAM, key, data).head).toBe(state.head);
    const machine = { ...data.machine, value: 'gone' } as unknown as SessionStateData['machine'];
    const gone = { ...data, machine };
    expect(() => new SessionState(STREAM, key, gone)).toThrow();
  });

  it('refuses a record that skips a cursor, so a gap is read before it is applied', () => {
    const state = new SessionState(STREAM, randomBytes(32));
    const [opened, message] = playRun(1, [{ a: 'message' }, { a: 'started' }]).events.map(stored);
    if (opened === undefined || message === undefined) throw new Error('no run');
    state.apply(opened);
    const skipped = { ...message, envelope: { ...message.envelope, cursor: 3 } };
    expect(() => state.apply(skipped)).toThrow(/arrived before 2/);
  });
});
