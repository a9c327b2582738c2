import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TailLine } from '../../../src/schemas/records.ts';
import { sealLayer, tenantSealKey } from '../../../src/sessions/sealing.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import {
  append,
  archive,
  cursors,
  ndjsonTail,
  openTestSession,
  record,
  tokenFor,
  within,
  wsTail,
  type TestSession,
} from './tail-fixture.ts';

let harness: TestApp;
let base: string;

beforeAll(async () => {
  harness = await startTestApp();
  base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await harness.close();
});

const args = { query: 'select * from payroll' };
const result = { content: [{ type: 'text', text: 'salaries: redacted' }] };

/** A turn with one call to the executor `bot`, one to another executor, and a completion. */
async function landCall(session: TestSession) {
  const key = tenantSealKey(harness.deps.sealKey, session.tenant);
  const call = (to: string, id: string) =>
    record(
      'invoke.allowed',
      {
        turn: 2,
        cause: 3,
        call: id,
        tool: 'sql',
        target: to,
        args: sealLayer(args, key),
        evidence: {},
        timeout: 60_000,
        result_limit: 65_536,
        gate: `gate-${id}`,
      },
      'service:authorizer',
      to,
    );
  return append(harness, session.id, [
    record('message.submitted', { text: 'payroll please' }),
    record(
      'model.output',
      {
        turn: 2,
        round: 1,
        text: null,
        tool_calls: [{ id: 'c1', name: 'sql', evidence: {}, args: sealLayer(args, key) }],
        stop: 'tool_use',
        model: 'simulated',
        usage: { input: 5, output: 5 },
      },
      'service:turn',
    ),
    call('executor:bot', 'c1'),
    call('executor:other', 'c2'),
    record(
      'invoke.completed',
      { ok: true, result: sealLayer(result, key), error: null, truncated: false },
      'executor:bot',
    ),
  ]);
}

function bodyAt(lines: readonly TailLine[], cursor: number): Record<string, unknown> {
  const line = lines.find((l) => 'Ok' in l && l.Ok.envelope.cursor === cursor);
  if (line === undefined || !('Ok' in line)) throw new Error(`no record at ${cursor}`);
  return line.Ok.body as Record<string, unknown>;
}

describe('faces of the tail (decisions part D)', () => {
  it('a principal never sees addressed records; sealed layers read as digest and size', async () => {
    const session = await openTestSession(harness);
    await landCall(session);
    await archive(harness, session.id);
    const token = await tokenFor(harness, session, 'principal:ada');
    const ndjson = await ndjsonTail(base, `/sessions/${session.id}/events?from=1`, {
      authorization: `Bearer ${token}`,
    });
    const ws = await wsTail(`${base.replace('http', 'ws')}/sessions/${session.id}/events?from=1`, {
      protocols: ['bearer', token],
    });
    await within(5_000, ndjson.done, 'the principal tail');
    await within(5_000, ws.done, 'the principal WebSocket tail');
    expect(ws.lines).toEqual(ndjson.lines);
    // Cursors 4 and 5 are addressed: skipped, the rest in order.
    expect(cursors(ndjson.lines)).toEqual([1, 2, 3, 6, 7]);
    const text = JSON.stringify(ndjson.lines);
    expect(text).not.toContain('select');
    expect(text).not.toContain('salaries');
    expect(text).not.toContain('box');
    const call = (bodyAt(ndjson.lines, 3).tool_calls as Record<string, unknown>[])[0];
    expect(call?.args).toEqual({
      sealed: {
        digest: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/) as string,
        size: Buffer.byteLength(JSON.stringify(args)),
      },
    });
    expect(bodyAt(ndjson.lines, 6).result).toMatchObject({
      sealed: { size: expect.any(Number) as number },
    });
  });

  it('an executor sees its own calls with arguments and gate, never another executor’s', async () => {
    const session = await openTestSession(harness);
    await landCall(session);
    await archive(harness, session.id);
    const token = await tokenFor(harness, session, 'executor:bot', ['read', 'claim']);
    const tail = await ndjsonTail(base, `/sessions/${session.id}/events?from=1`, {
      authorization: `Bearer ${token}`,
    });
    await within(5_000, tail.done, 'the executor tail');
    expect(cursors(tail.lines)).toEqual([1, 2, 3, 4, 6, 7]);
    expect(bodyAt(tail.lines, 4)).toMatchObject({ args, gate: 'gate-c1', call: 'c1' });
    // The call's other sealed layers stay sealed.
    const call = (bodyAt(tail.lines, 3).tool_calls as Record<string, unknown>[])[0];
    expect(call?.args).toHaveProperty('sealed.digest');
    expect(bodyAt(tail.lines, 6).result).toHaveProperty('sealed.digest');
    expect(JSON.stringify(tail.lines)).not.toContain('gate-c2');
  });
});
