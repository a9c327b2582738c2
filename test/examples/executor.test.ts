/**
 * examples/executor run as a vendor runs it: a child process
 * against the service listening on a real port, with its key registered at session open.
 * It takes its token, tails its face, verifies each gate, claims, performs and completes
 * the calls of a turn; killed right after its first claim and started again on the same
 * state file, it claims that call again and completes it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exportPKCS8, exportSPKI, generateKeyPair, type CryptoKey } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createClient,
  ExecutorToken,
  ServiceKeys,
  verifyGate,
  type Allowed,
} from '@agent-session-service/client';
import { startTestApp, type TestApp } from '../support/app.ts';
import { TurnClient, type OpenedSession, type TailRecord } from '../turns/turn-client.ts';

const TWO_CALLS = '/call lookup_order {"order_id":"A-1"}\n/call lookup_order {"order_id":"B-2"}';

const ofKind = (records: readonly TailRecord[], name: string): TailRecord[] =>
  records.filter((r) => r.envelope.kind.name === name);

describe('examples/executor', () => {
  let harness: TestApp;
  let client: TurnClient;
  let listening: string;
  let dir: string;
  const children: ChildProcess[] = [];
  let privateKey: CryptoKey;
  let publicKey: CryptoKey;

  beforeAll(async () => {
    harness = await startTestApp();
    listening = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    client = new TurnClient(listening, harness.keys.generatedOperatorToken ?? '');
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await rm(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await harness.close();
  });

  /** A session whose executor `name` has a fresh key, written where the executor reads it. */
  async function sessionWithExecutor(
    name: string,
  ): Promise<{ key: string; opened: OpenedSession }> {
    dir = await mkdtemp(path.join(tmpdir(), 'executor-'));
    ({ privateKey, publicKey } = await generateKeyPair('EdDSA', {
      crv: 'Ed25519',
      extractable: true,
    }));
    await writeFile(path.join(dir, 'key.pem'), await exportPKCS8(privateKey));
    const { key } = await client.install();
    const opened = await client.open(key, {
      executor: { name, public_key: await exportSPKI(publicKey) },
    });
    return { key, opened };
  }

  /** Starts the executor as a child process; its output lines are collected in `lines`. */
  function startExecutor(name: string, opened: OpenedSession, extra: Record<string, string> = {}) {
    const child = spawn(
      process.execPath,
      ['--disable-warning=ExperimentalWarning', 'examples/executor/main.ts'],
      {
        env: {
          ...process.env,
          SERVICE_URL: listening,
          BASE_URL: harness.deps.baseUrl,
          SESSION_ID: opened.session,
          EXECUTOR_NAME: name,
          EXECUTOR_KEY: path.join(dir, 'key.pem'),
          EXECUTOR_STATE: path.join(dir, 'state.json'),
          ...extra,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    children.push(child);
    const lines: string[] = [];
    const collect = (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean));
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    return { child, lines, exited };
  }

  it('performs both calls of a turn and stops when the session is archived', async () => {
    const { key, opened } = await sessionWithExecutor('shipper');
    const executor = startExecutor('shipper', opened);
    await client.send(opened, TWO_CALLS);

    const records = await client.turnsEnded(opened, 1, 20_000);
    const completed = ofKind(records, 'invoke.completed');
    expect(completed.map((r) => r.envelope.producer)).toEqual([
      'executor:shipper',
      'executor:shipper',
    ]);
    expect(completed.map((r) => r.body.ok)).toEqual([true, true]);
    expect(ofKind(records, 'turn.ended')[0]?.body.reason).toBe('completed');
    expect(ofKind(records, 'model.output')[1]?.body.text).toBe(
      'lookup_order returned: order A-1 shipped on Monday\n' +
        'lookup_order returned: order B-2 shipped on Monday',
    );

    await client.archive(key, opened);
    const [code] = await executor.exited;
    expect(code, executor.lines.join('\n')).toBe(0);
  });

  it('claims again after it was killed right after its first claim, and completes', async () => {
    const { key, opened } = await sessionWithExecutor('shipper');
    const crashing = startExecutor('shipper', opened, { EXECUTOR_EXIT_AFTER_CLAIM: '1' });
    await client.send(opened, TWO_CALLS);
    const [, signal] = await crashing.exited;
    expect(signal, crashing.lines.join('\n')).toBe('SIGKILL');
    expect(crashing.lines.map((line) => JSON.parse(line) as unknown)).toContainEqual(
      expect.objectContaining({ event: 'claimed', attempt: 'first' }),
    );

    const restarted = startExecutor('shipper', opened);
    const records = await client.turnsEnded(opened, 1, 20_000);
    const claimed = ofKind(records, 'invoke.claimed');
    const [first] = claimed;
    const cause = Number(/^claim:(\d+):/.exec(first?.envelope.idem ?? '')?.[1]);
    const ofFirstCall = claimed.filter((r) => r.envelope.idem?.startsWith(`claim:${cause}:`));
    expect(ofFirstCall.map((r) => r.body.attempt)).toEqual(['first', 'again']);
    const completed = ofKind(records, 'invoke.completed');
    expect(completed.map((r) => [r.envelope.idem, r.envelope.producer, r.body.ok])).toContainEqual([
      `call:${cause}`,
      'executor:shipper',
      true,
    ]);
    expect(completed).toHaveLength(2);
    expect(completed.every((r) => r.body.ok === true)).toBe(true);
    expect(ofKind(records, 'turn.ended')[0]?.body.reason).toBe('completed');

    await client.archive(key, opened);
    const [code] = await restarted.exited;
    expect(code, restarted.lines.join('\n')).toBe(0);
    expect(restarted.lines.map((line) => JSON.parse(line) as unknown)).toContainEqual(
      expect.objectContaining({ event: 'claimed', cursor: cause, attempt: 'again' }),
    );
  });

  it('verifies a real gate and refuses one that does not pin the call', async () => {
    const { opened } = await sessionWithExecutor('shipper');
    const service = createClient({ baseUrl: listening });
    const token = await new ExecutorToken(service, {
      session: opened.session,
      name: 'shipper',
      key: privateKey,
      audienceBase: harness.deps.baseUrl,
    }).get();
    await client.send(opened, '/call lookup_order {"order_id":"A-1"}');
    const face = await client.until({ session: opened.session, token }, (log) =>
      log.some((r) => r.envelope.kind.name === 'invoke.allowed'),
    );
    const allowed = ofKind(face, 'invoke.allowed')[0]?.body as unknown as Allowed;
    const keys = new ServiceKeys(service);
    const check = (body: Allowed) => verifyGate(keys, opened.session, body);
    await expect(check(allowed)).resolves.toBeUndefined();
    await expect(check({ ...allowed, args: { order_id: 'A-2' } })).rejects.toThrow(
      "the gate's args_digest is not this call's",
    );
    await expect(check({ ...allowed, call: 'call_9' })).rejects.toThrow(
      "the gate's call is not this call's",
    );
    await expect(check({ ...allowed, gate: `${allowed.gate ?? ''}x` })).rejects.toThrow();
  });
});
