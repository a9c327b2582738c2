/**
 * Executors (decisions rows 57, 65, 66, part D), over real HTTP the way a vendor's
 * executor works: it registers its key at session open, exchanges a signed assertion for
 * its token, reads its face of the log (the call's plain arguments and a gate that
 * verifies against the JWKS), claims the call, completes it once under the grant, and the
 * model answers from the result. The principal never sees the arguments or the result;
 * the owner's opened audit of the archived session does.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyGate } from '../../src/gate/gate.ts';
import { startTestApp, type TestApp, type TestAppOptions } from '../support/app.ts';
import { assertion, newExecutor } from '../support/executor.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/services.ts';
import type { TurnClient } from './turn-client.ts';
import { kinds, listeningClient, type OpenedSession, type TailRecord } from './turn-client.ts';

const backends: [string, TestAppOptions][] = [
  ['the embedded default', {}],
  ['Redis + PostgreSQL', { databaseUrl: TEST_DATABASE_URL, redisUrl: TEST_REDIS_URL }],
];

const ofKind = (records: readonly TailRecord[], name: string): TailRecord[] =>
  records.filter((r) => r.envelope.kind.name === name);

const INVOKE_COMPLETED = { name: 'invoke.completed', version: 1 };

describe.each(backends)('executors on %s', (_name, options) => {
  let harness: TestApp;
  let client: TurnClient;

  beforeAll(async () => {
    harness = await startTestApp(options);
    client = await listeningClient(harness);
  });
  afterAll(async () => {
    await harness.close();
  });

  /** `GET /sessions/{id}/executor/token` with `bearer`. */
  const exchange = (opened: OpenedSession, bearer: string) =>
    client.call('GET', `/sessions/${opened.session}/executor/token`, bearer);
  const audienceOf = (opened: OpenedSession): string =>
    `${harness.deps.baseUrl}/sessions/${opened.session}/executor/token`;

  it('performs a call: token, face with a verified gate, claims, one completion, the answer', async () => {
    const shipper = await newExecutor('shipper');
    const { key, owner } = await client.install();
    const opened = await client.open(key, {
      executor: { name: shipper.name, public_key: shipper.publicPem },
    });

    // Row 65: the assertion is good once, for this endpoint, signed with this key.
    const signed = await assertion(shipper, audienceOf(opened));
    const exchanged = await exchange(opened, signed);
    expect(exchanged.status, JSON.stringify(exchanged.body)).toBe(200);
    const token = (exchanged.body as { token: string }).token;
    expect((await exchange(opened, signed)).status).toBe(401);
    expect((await exchange(opened, await assertion(shipper, 'http://elsewhere/x'))).status).toBe(
      401,
    );
    const stranger = await newExecutor('shipper');
    expect((await exchange(opened, await assertion(stranger, audienceOf(opened)))).status).toBe(
      401,
    );

    await client.send(opened, '/call lookup_order {"order_id":"A-1"}');
    const face: OpenedSession = { session: opened.session, token };
    const seen = await client.until(face, (log) => kinds(log).includes('invoke.allowed'));
    const [allowed] = ofKind(seen, 'invoke.allowed');
    expect(allowed?.envelope).toMatchObject({ to: 'executor:shipper' });
    expect(allowed?.body).toMatchObject({ call: 'call_1', args: { order_id: 'A-1' } });
    const jwks = (await client.call('GET', '/.well-known/jwks.json', null)).body as never;
    const verified = await verifyGate(jwks, allowed?.body.gate as string, {
      sid: opened.session,
      call: 'call_1',
      tool: 'lookup_order',
      args: { order_id: 'A-1' },
    });
    expect(verified).toMatchObject({ valid: true });
    // The principal's face shows no addressed record.
    expect(kinds(await client.log(opened))).not.toContain('invoke.allowed');

    const cause = allowed?.envelope.cursor ?? 0;
    const claim = (bearer: string, at = cause) =>
      client.call('POST', `/sessions/${opened.session}/executor/claim`, bearer, { cause: at });
    const first = await claim(token);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({
      attempt: 'first',
      credential: expect.any(String) as string,
    });
    expect((await claim(token)).body).toMatchObject({ attempt: 'again' });
    expect((await claim(opened.token)).status).toBe(403);
    expect((await claim(token, 1)).status).toBe(403);
    expect((await claim(token, cause + 1000)).status).toBe(404);

    const grant = (first.body as { credential: string }).credential;
    const result = { content: [{ type: 'text', text: 'shipped on Monday' }] };
    const complete = (body: unknown) =>
      client.call('POST', `/sessions/${opened.session}/events`, grant, [
        { kind: INVOKE_COMPLETED, body },
      ]);
    const done = await complete({ ok: true, result, error: null });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    const again = await complete({ ok: true, result, error: null });
    expect(again).toEqual(done);
    expect((await complete({ ok: false, result: null, error: 'changed my mind' })).status).toBe(
      409,
    );
    expect((await claim(token)).body).toEqual({
      attempt: 'completed',
      credential: null,
      expires: null,
    });

    const records = await client.turnsEnded(opened, 1);
    const outputs = ofKind(records, 'model.output');
    expect(outputs[1]?.body.text).toBe('lookup_order returned: shipped on Monday');
    expect(ofKind(records, 'turn.ended')[0]?.body.reason).toBe('completed');
    const [completed] = ofKind(records, 'invoke.completed');
    expect(completed?.envelope).toMatchObject({
      producer: 'executor:shipper',
      idem: `call:${cause}`,
    });
    expect(completed?.body).toMatchObject({
      ok: true,
      truncated: false,
      result: { sealed: { size: expect.any(Number) as number } },
    });
    expect(ofKind(records, 'invoke.claimed').map((r) => r.body.attempt)).toEqual([
      'first',
      'again',
    ]);

    await client.archive(key, opened);
    const audit = await client.audit(owner, opened);
    expect(ofKind(audit, 'invoke.allowed')[0]?.body).toMatchObject({ args: { order_id: 'A-1' } });
    expect(ofKind(audit, 'invoke.allowed')[0]?.body).not.toHaveProperty('gate');
    expect(ofKind(audit, 'invoke.completed')[0]?.body).toMatchObject({ result });
  });

  it('refuses a completion after the deadline completed the call (row 58)', async () => {
    const shipper = await newExecutor('shipper');
    const { key } = await client.install();
    const opened = await client.open(key, {
      executor: { name: shipper.name, public_key: shipper.publicPem },
    });
    const exchanged = await exchange(opened, await assertion(shipper, audienceOf(opened)));
    const face: OpenedSession = {
      session: opened.session,
      token: (exchanged.body as { token: string }).token,
    };
    // refund's timeout is 1 s: claimed, then left unanswered past its deadline.
    await client.send(opened, '/call refund {"amount":5}');
    const seen = await client.until(face, (log) => kinds(log).includes('invoke.allowed'));
    const cause = ofKind(seen, 'invoke.allowed')[0]?.envelope.cursor ?? 0;
    const claim = () =>
      client.call('POST', `/sessions/${opened.session}/executor/claim`, face.token, { cause });
    const first = await claim();
    expect(first.body).toMatchObject({ attempt: 'first' });
    const records = await client.turnsEnded(opened, 1, 10_000);
    expect(ofKind(records, 'invoke.completed')[0]?.body).toMatchObject({
      ok: false,
      error: 'timeout',
    });
    const late = await client.call(
      'POST',
      `/sessions/${opened.session}/events`,
      (first.body as { credential: string }).credential,
      [{ kind: INVOKE_COMPLETED, body: { ok: true, result: null, error: null } }],
    );
    expect(late.status).toBe(409);
    expect((await claim()).body).toEqual({ attempt: 'completed', credential: null, expires: null });
  });
});
