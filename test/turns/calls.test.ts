/**
 * The authorizer at run time (decisions row 58): every call of a model.output is decided
 * in order over HTTP, through a real install whose consent sets the tenant's policies, in
 * sessions opened with and without an executor. What the principal's face shows, and what
 * the owner's opened audit shows once the session is archived, are both checked.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestAppOptions } from '../support/app.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/services.ts';
import type { TurnClient } from './turn-client.ts';
import { kinds, listeningClient, type TailRecord } from './turn-client.ts';

const backends: [string, TestAppOptions][] = [
  ['the embedded default', {}],
  ['Redis + PostgreSQL', { databaseUrl: TEST_DATABASE_URL, redisUrl: TEST_REDIS_URL }],
];

const ofKind = (records: readonly TailRecord[], name: string): TailRecord[] =>
  records.filter((r) => r.envelope.kind.name === name);

/** An executor's registration (row 62): its name and an Ed25519 public key, SPKI PEM. */
function executor(name: string): { name: string; public_key: string } {
  const { publicKey } = generateKeyPairSync('ed25519');
  return { name, public_key: publicKey.export({ type: 'spki', format: 'pem' }).toString() };
}

/** Row 26 policy: refunds under 100 only, the amount projected as evidence. */
const UNDER_100 = {
  policies: [
    {
      tool: 'refund',
      posture: 'restrictive',
      items: [{ arg: 'amount', effect: 'allow', op: 'lt', operand: { value: 100 } }],
      project: ['amount'],
    },
  ],
};

describe.each(backends)('the authorizer on %s', (_name, options) => {
  let harness: TestApp;
  let client: TurnClient;

  beforeAll(async () => {
    harness = await startTestApp(options);
    client = await listeningClient(harness);
  });
  afterAll(async () => {
    await harness.close();
  });

  it('denies by policy and schema, allows what fits, and times out an unclaimed call', async () => {
    const { key, owner } = await client.install({}, undefined, UNDER_100);
    const opened = await client.open(key, { executor: executor('shipper') });
    await client.send(
      opened,
      [
        '/call refund {"amount":500}',
        '/call refund {"amount":"lots"}',
        '/call refund {"amount":50,"reason":"late"}',
      ].join('\n'),
    );
    // While the allowed call is out, status lists it as pending (row 34).
    const waiting = await client.until(opened, (log) => kinds(log).includes('invoke.denied'));
    expect(kinds(waiting)).toContain('invoke.denied');
    let { live } = await client.status(opened);
    for (let i = 0; i < 50 && live.pending.length !== 1; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      ({ live } = await client.status(opened));
    }
    expect(live).toMatchObject({
      phase: 'awaiting_tools',
      pending: [{ call: 'call_3', tool: 'refund', cursor: expect.any(Number) as number }],
    });
    const records = await client.turnsEnded(opened, 1, 10_000);
    // The principal's face: the denials and the completion are public, the allowed call is not.
    const denied = ofKind(records, 'invoke.denied');
    expect(denied.map((r) => r.body)).toEqual([
      expect.objectContaining({ call: 'call_1', reason: 'unsatisfied', evidence: { amount: 500 } }),
      expect.objectContaining({ call: 'call_2', reason: 'invalid_args', item: null }),
    ]);
    expect(ofKind(records, 'invoke.allowed')).toEqual([]);
    const [completed] = ofKind(records, 'invoke.completed');
    expect(completed?.body).toMatchObject({ ok: false, error: 'timeout', result: null });
    expect(completed?.envelope.producer).toBe('service:turn');
    // The model saw the three answers and the turn went on to end completed.
    const outputs = ofKind(records, 'model.output');
    expect(outputs).toHaveLength(2);
    expect(outputs[1]?.body.text).toEqual(expect.stringContaining('refund failed: error: timeout'));
    expect(ofKind(records, 'turn.ended')[0]?.body).toMatchObject({ reason: 'completed' });

    // The owner's opened audit shows the allowed call with its plain arguments, no gate.
    await client.archive(key, opened);
    const audit = await client.audit(owner, opened);
    const [allowed] = ofKind(audit, 'invoke.allowed');
    expect(allowed?.envelope).toMatchObject({
      producer: 'service:authorizer',
      to: 'executor:shipper',
    });
    expect(allowed?.body).toMatchObject({
      call: 'call_3',
      tool: 'refund',
      target: 'executor:shipper',
      args: { amount: 50, reason: 'late' },
      evidence: { amount: 50 },
      timeout: 1000,
      result_limit: 65_536,
      cause: outputs[0]?.envelope.cursor,
    });
    expect(allowed?.body).not.toHaveProperty('gate');
    // Row 58: the deadline is the allowed call's `at` plus its timeout.
    expect(completed?.envelope.at ?? 0).toBeGreaterThanOrEqual((allowed?.envelope.at ?? 0) + 1000);
    expect(completed?.envelope.idem).toBe(`call:${allowed?.envelope.cursor}`);
  });

  it('ends the turn rounds_exhausted when a round bound of 1 is reached on a call', async () => {
    const { key } = await client.install();
    const opened = await client.open(key, { rounds: 1, executor: executor('shipper') });
    await client.send(opened, '/call refund {"amount":5}');
    const records = await client.turnsEnded(opened, 1, 10_000);
    expect(kinds(records)).not.toContain('invoke.denied');
    expect(ofKind(records, 'invoke.completed')[0]?.body.error).toBe('timeout');
    expect(ofKind(records, 'turn.ended')[0]?.body.reason).toBe('rounds_exhausted');
  });
});
