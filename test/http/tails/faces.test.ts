/**
 * Faces of the tail (decisions part D) over real tails of a session whose turn made a real
 * call: the principal never sees what is addressed to the executor and reads sealed layers
 * as digest and size; the executor reads its call with arguments and gate. What no user
 * can make land (another executor's call in the session, a layer sealed under another
 * key, a body that is not JSON) is decided by the face functions, test/sessions/faces.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TailLine } from '../../../src/schemas/records.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { ARGS, linesOf, sessionWithCall } from './call-fixture.ts';
import { archive, cursors, ndjsonTail, tokenFor, within, wsTail } from './tail-fixture.ts';

let harness: TestApp;
let base: string;

beforeAll(async () => {
  harness = await startTestApp();
  base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await harness.close();
});

/** Every Ok line read to its end from an NDJSON tail with `token`. */
async function tailAll(session: string, token: string): Promise<TailLine[]> {
  const tail = await ndjsonTail(base, `/sessions/${session}/events?from=1`, {
    authorization: `Bearer ${token}`,
  });
  await within(5_000, tail.done, 'the tail');
  return tail.lines;
}

const SEALED = {
  sealed: {
    digest: expect.stringMatching(/^hmac-sha256:[0-9a-f]{64}$/) as string,
    size: Buffer.byteLength(JSON.stringify(ARGS)),
  },
};

describe('faces of the tail (decisions part D)', () => {
  it('a principal never sees addressed records; sealed layers read as digest and size', async () => {
    const session = await sessionWithCall(harness);
    await archive(harness, session);
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
    // Every record but those addressed to the executor, in order.
    const all = await tailAll(session.id, session.executorToken);
    const addressed = all.flatMap((l) => ('Ok' in l && l.Ok.envelope.to !== null ? [l] : []));
    expect(addressed.length).toBeGreaterThan(0);
    expect(cursors(ndjson.lines)).not.toContain(session.cause);
    for (const line of ndjson.lines) expect(line).toMatchObject({ Ok: { envelope: { to: null } } });
    expect(linesOf(ndjson.lines, 'invoke.allowed')).toEqual([]);
    // Ada's own message names the arguments; no record of the call shows them.
    const text = JSON.stringify(
      ndjson.lines.filter((l) => linesOf([l], 'message.submitted').length === 0),
    );
    expect(text).not.toContain(ARGS.word);
    expect(text).not.toContain('box');
    const [output] = linesOf(ndjson.lines, 'model.output');
    expect((output?.body as { tool_calls: { args: unknown }[] }).tool_calls[0]?.args).toEqual(
      SEALED,
    );
    const [completed] = linesOf(ndjson.lines, 'invoke.completed');
    expect((completed?.body as { result: unknown }).result).toMatchObject({
      sealed: { size: expect.any(Number) as number },
    });
  });

  it('an executor sees its own call with arguments and gate; other layers stay sealed', async () => {
    const session = await sessionWithCall(harness);
    await archive(harness, session);
    const lines = await tailAll(session.id, session.executorToken);
    const [allowed] = linesOf(lines, 'invoke.allowed');
    expect(allowed?.envelope).toMatchObject({ cursor: session.cause, to: 'executor:mailer' });
    expect(allowed?.body).toMatchObject({
      args: ARGS,
      gate: expect.any(String) as string,
      call: 'call_1',
    });
    // The call's other sealed layers stay sealed.
    const [output] = linesOf(lines, 'model.output');
    expect((output?.body as { tool_calls: { args: unknown }[] }).tool_calls[0]?.args).toEqual(
      SEALED,
    );
    const [completed] = linesOf(lines, 'invoke.completed');
    expect(completed?.body).toHaveProperty('result.sealed.digest');
  });
});
