/**
 * Agent turns over real HTTP, the way users run them, on every backend a deployment may
 * pick: on the embedded default (SQLite), on PostgreSQL, and on Redis + PostgreSQL, an
 * install made by proposal and consent opens a session, a principal sends messages, and
 * the service lands each step of the turn; everything is read back through the
 * principal's tail, status and usage.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp, type TestAppOptions } from '../support/app.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/services.ts';
import type { TurnClient } from './turn-client.ts';
import { kinds, listeningClient, type TailRecord } from './turn-client.ts';

const backends: [string, TestAppOptions][] = [
  ['the embedded default', {}],
  ['PostgreSQL', { databaseUrl: TEST_DATABASE_URL }],
  ['Redis + PostgreSQL', { databaseUrl: TEST_DATABASE_URL, redisUrl: TEST_REDIS_URL }],
];

const ofKind = (records: readonly TailRecord[], name: string): TailRecord[] =>
  records.filter((r) => r.envelope.kind.name === name);

describe.each(backends)('turns on %s', (_name, options) => {
  let harness: TestApp;
  let client: TurnClient;

  beforeAll(async () => {
    harness = await startTestApp(options);
    client = await listeningClient(harness);
  });
  afterAll(async () => {
    await harness.close();
  });

  it('runs a turn for a message: started, an echo, ended completed, back to idle', async () => {
    const { key } = await client.install();
    const opened = await client.open(key, { instructions: 'Be brief.' });
    const sent = await client.send(opened, 'hello there');
    const records = await client.turnsEnded(opened, 1);
    expect(kinds(records)).toEqual([
      'session.opened',
      'message.submitted',
      'turn.started',
      'model.output',
      'turn.ended',
    ]);
    const [started] = ofKind(records, 'turn.started');
    expect(started?.body).toEqual({ inputs: [sent], rounds: 16 });
    expect(started?.envelope).toMatchObject({
      producer: 'service:turn',
      idem: `svc:${sent}:start`,
    });
    const turn = started?.envelope.cursor;
    const [output] = ofKind(records, 'model.output');
    expect(output?.body).toMatchObject({
      turn,
      round: 1,
      text: 'hello there',
      tool_calls: [],
      stop: 'end_turn',
      model: 'simulated',
    });
    expect(output?.envelope.idem).toBe(`svc:${turn}:r1a1`);
    const [ended] = ofKind(records, 'turn.ended');
    expect(ended?.body).toMatchObject({ turn, reason: 'completed', rounds: 1, error: null });
    expect(ended?.envelope.idem).toBe(`svc:${turn}:end`);
    const status = await client.status(opened);
    expect(status.live).toMatchObject({ phase: 'idle', turn: null, round: null });
    expect(status.live.prompt_tokens).toBeGreaterThan(0);
  });

  it('retries failed inferences with growing retry_in, and ends failed when they are spent', async () => {
    const { key } = await client.install({ retry: { attempts: 3, backoff: '100ms' } });
    const recovered = await client.open(key);
    await client.send(recovered, '/fail 2');
    let records = await client.turnsEnded(recovered, 1);
    expect(ofKind(records, 'inference.failed').map((r) => r.body.retry_in)).toEqual([100, 200]);
    expect(ofKind(records, 'inference.failed').map((r) => r.body.attempt)).toEqual([1, 2]);
    expect(ofKind(records, 'turn.ended')[0]?.body.reason).toBe('completed');
    const [first, second] = ofKind(records, 'inference.failed');
    expect((second?.envelope.at ?? 0) - (first?.envelope.at ?? 0)).toBeGreaterThanOrEqual(100);

    const failing = await client.open(key);
    await client.send(failing, '/fail 5');
    records = await client.turnsEnded(failing, 1);
    expect(ofKind(records, 'inference.failed').map((r) => r.body.retry_in)).toEqual([
      100,
      200,
      null,
    ]);
    expect(ofKind(records, 'model.output')).toEqual([]);
    expect(ofKind(records, 'turn.ended')[0]?.body).toMatchObject({
      reason: 'failed',
      error: expect.stringContaining('simulated failure') as string,
    });
  });

  it('cancels a slow turn within a second, and shows the live phase meanwhile', async () => {
    const { key } = await client.install();
    const opened = await client.open(key);
    await client.send(opened, '/slow 20000');
    await client.until(opened, (records) => kinds(records).includes('turn.started'));
    const live = await client.status(opened);
    expect(live.live).toMatchObject({ phase: 'inferring', round: 1 });
    expect(live.live.turn).toBeGreaterThan(0);
    const cancelledAt = Date.now();
    await client.cancel(opened);
    const records = await client.turnsEnded(opened, 1, 5000);
    expect(Date.now() - cancelledAt).toBeLessThan(1000);
    expect(ofKind(records, 'turn.ended')[0]?.body.reason).toBe('cancelled');
    expect(ofKind(records, 'model.output')).toEqual([]);
    expect((await client.status(opened)).live.phase).toBe('idle');
  });

  it('queues a message sent mid-turn for the next turn (row 90)', async () => {
    const { key } = await client.install();
    const opened = await client.open(key);
    await client.send(opened, '/slow 600');
    await client.until(opened, (records) => kinds(records).includes('turn.started'));
    const queued = await client.send(opened, 'and then this');
    const records = await client.turnsEnded(opened, 2);
    const started = ofKind(records, 'turn.started');
    expect(started[1]?.body.inputs).toEqual([queued]);
    expect(ofKind(records, 'model.output')[1]?.body.text).toBe('and then this');
    // The second turn starts only after the first one ended.
    const cursors = records.map((r) => r.envelope.kind.name);
    expect(cursors.indexOf('turn.ended')).toBeLessThan(cursors.lastIndexOf('turn.started'));
  });

  it('compacts before the inference whose prompt reaches compact_at, then answers from the summary', async () => {
    const { key } = await client.install({ compact_at: 1024 });
    const opened = await client.open(key);
    await client.send(opened, `first ${'a'.repeat(3000)}`);
    await client.turnsEnded(opened, 1);
    await client.send(opened, `second ${'b'.repeat(3000)}`);
    const records = await client.turnsEnded(opened, 2);
    const names = kinds(records);
    const requested = names.indexOf('compaction.requested');
    expect(requested).toBeGreaterThan(names.indexOf('turn.ended'));
    expect(names[requested + 1]).toBe('compaction.completed');
    expect(names[requested + 2]).toBe('model.output');
    const [request] = ofKind(records, 'compaction.requested');
    const [completed] = ofKind(records, 'compaction.completed');
    expect(request?.body.compact_at).toBe(1024);
    expect(request?.body.prompt_tokens).toBeGreaterThanOrEqual(1024);
    expect(completed?.body).toMatchObject({
      requested: request?.envelope.cursor,
      through: request?.body.through,
    });
    expect(completed?.body.summary).toEqual(expect.stringContaining('first'));
    expect(completed?.body.tokens_after).toBeLessThan(completed?.body.tokens_before as number);
    // The answer after it echoes the second message: later prompts start from the summary.
    expect(ofKind(records, 'model.output')[1]?.body.text).toEqual(
      expect.stringContaining('second'),
    );
  });

  it('denies the calls of a session without an executor, and the turn goes on', async () => {
    const { key } = await client.install();
    const opened = await client.open(key);
    await client.send(opened, '/call lookup_order {"order_id":"A-1"}\n/call cancel_order {}');
    const records = await client.turnsEnded(opened, 1);
    const [asked, answered] = ofKind(records, 'model.output');
    expect(asked?.body).toMatchObject({ round: 1, stop: 'tool_use' });
    expect((asked?.body.tool_calls as { name: string }[]).map((c) => c.name)).toEqual([
      'lookup_order',
      'cancel_order',
    ]);
    // Part D: the principal's face serves the call arguments sealed.
    expect((asked?.body.tool_calls as { args: unknown }[])[0]?.args).toMatchObject({
      sealed: { size: expect.any(Number) as number },
    });
    expect(ofKind(records, 'invoke.denied').map((r) => r.body.reason)).toEqual([
      'no_executor',
      'unknown_tool',
    ]);
    expect(answered?.body).toMatchObject({ round: 2, stop: 'end_turn' });
    expect(ofKind(records, 'turn.ended')[0]?.body).toMatchObject({
      reason: 'completed',
      rounds: 2,
    });
  });

  it('ends a turn at its round bound (rounds_exhausted)', async () => {
    const { key } = await client.install();
    const opened = await client.open(key, { rounds: 1 });
    await client.send(opened, '/call lookup_order {"order_id":"A-1"}');
    const records = await client.turnsEnded(opened, 1);
    expect(ofKind(records, 'turn.ended')[0]?.body.reason).toBe('rounds_exhausted');
    expect(ofKind(records, 'model.output')).toHaveLength(1);
  });

  it('archives mid-turn: turn.ended archived, then session.archived last; usage counts the session', async () => {
    const { key, owner } = await client.install();
    const opened = await client.open(key);
    await client.send(opened, 'warm up');
    await client.turnsEnded(opened, 1);
    await client.send(opened, '/slow 20000');
    await client.until(opened, (records) => ofKind(records, 'turn.started').length === 2);
    await client.archive(key, opened);
    const records = await client.log(opened);
    expect(kinds(records).slice(-2)).toEqual(['turn.ended', 'session.archived']);
    expect(records.at(-2)?.body.reason).toBe('archived');
    expect((await client.status(opened)).live.phase).toBe('ended');

    const row = await client.usageWhen(owner, (r) => (r.events as number) >= records.length);
    const bytes = records.reduce((sum, r) => sum + r.envelope.size, 0);
    expect(row).toMatchObject({
      events: records.length,
      bytes_archived: bytes,
      sessions_checkpointed: 1,
    });
    const outputs = ofKind(records, 'model.output');
    const input = outputs.reduce((sum, r) => sum + (r.body.usage as { input: number }).input, 0);
    expect((row?.tokens as Record<string, { input: number }>).simulated?.input).toBe(input);
  });
});
