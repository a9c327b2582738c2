/**
 * Turns survive the process, since a turn's state is its log and its timers are durable:
 * the real service in a child process is killed with SIGKILL in the middle of a slow
 * inference and in the middle of a retry's backoff, then started again on the same data;
 * and with two processes on shared PostgreSQL and Redis, the driving one is killed and
 * the other finishes the turn. Every log is checked for steps landed twice (one record
 * per idem key, one `turn.ended` per `turn.started`).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SQLITE_FILE } from '../../src/storage/sql/open.ts';
import { SAVE_AT_REST } from '../../src/turns/state-snapshot.ts';
import { startService, type ServiceProcess } from '../support/service-process.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/services.ts';
import { kinds, TurnClient, type TailRecord } from './turn-client.ts';

const OPERATOR_TOKEN = randomBytes(32).toString('base64url');
const LEASE_MS = 1500;
const running: ServiceProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.kill()));
});
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'turn-crash-'));
  dirs.push(dir);
  return dir;
}

/** The cursor of the session's saved turn state in the service's SQLite file, if any. */
function savedCursor(dataDir: string, session: string): number | null {
  const db = new DatabaseSync(path.join(dataDir, SQLITE_FILE), { readOnly: true });
  try {
    const row = db.prepare('SELECT cursor FROM turn_states WHERE session = ?').get(session);
    return row === undefined ? null : Number(row.cursor);
  } catch {
    return null; // not migrated yet
  } finally {
    db.close();
  }
}

async function start(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await startService({
    OPERATOR_TOKEN,
    // Tokens name BASE_URL as their issuer: one deployment keeps it across restarts and
    // processes, whatever port each process listens on.
    BASE_URL: 'http://turns.example',
    LEASE_MS: String(LEASE_MS),
    TURN_SWEEP_MS: '200',
    // Drivers leave (and save their state) soon after their last work.
    TURN_LINGER_MS: '500',
    ...env,
  });
  running.push(service);
  return service;
}

/** Kills `first` with SIGKILL and starts the service again on `env`: a client of it. */
async function restart(first: ServiceProcess, env: Record<string, string>): Promise<TurnClient> {
  await first.kill();
  running.splice(running.indexOf(first), 1);
  const second = await start(env);
  return new TurnClient(second.url, OPERATOR_TOKEN);
}

/** No step landed twice: idem keys are unique and every started turn ended once. */
function expectNoDuplicateSteps(records: readonly TailRecord[]): void {
  const idems = records.map((r) => r.envelope.idem).filter((idem) => idem !== null);
  expect(new Set(idems).size).toBe(idems.length);
  const started = records.filter((r) => r.envelope.kind.name === 'turn.started').length;
  const ended = records.filter((r) => r.envelope.kind.name === 'turn.ended').length;
  expect(ended).toBe(started);
}

/** `driving_appends_total` of the service at `base`, by its `due` label. */
async function drivingAppends(base: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(
    /^agent_sessions_driving_appends_total\{due="(\w+)"\} (\d+)$/gm,
  )) {
    counts[match[1] ?? ''] = Number(match[2]);
  }
  return counts;
}

describe('turns across kill -9', () => {
  it('finishes a slow turn after the service is killed mid-inference and restarted', async () => {
    const env = { DATA_DIR: await dataDir() };
    const first = await start(env);
    const client = new TurnClient(first.url, OPERATOR_TOKEN);
    const { key } = await client.install();
    const opened = await client.open(key);
    await client.send(opened, '/slow 1500');
    await client.until(opened, (records) => kinds(records).includes('turn.started'));

    const again = await restart(first, env);
    const records = await again.turnsEnded(opened, 1, LEASE_MS + 10_000);
    expect(kinds(records)).toEqual([
      'session.opened',
      'message.submitted',
      'turn.started',
      'model.output',
      'turn.ended',
    ]);
    expect(records.at(-1)?.body.reason).toBe('completed');
    expectNoDuplicateSteps(records);
  });

  it('drives a message held on its lingering driver (no due mark of its own) after kill -9', async () => {
    // The driver lingers between the turns, its due entry left due: a message admitted on
    // that entry writes no mark, and must still be driven once the process is gone.
    const env = { DATA_DIR: await dataDir(), TURN_LINGER_MS: '10000' };
    const first = await start(env);
    const client = new TurnClient(first.url, OPERATOR_TOKEN);
    const { key } = await client.install();
    const opened = await client.open(key);
    // The first message starts the driver; the second's mark, written while the driver
    // lingers, tells it its entry stands due; the third is held on that entry.
    await client.send(opened, 'one');
    await client.turnsEnded(opened, 1);
    await client.send(opened, 'two');
    await client.turnsEnded(opened, 2);
    await client.send(opened, '/slow 1500');
    expect(await drivingAppends(first.url)).toEqual({ marked: 2, held: 1 });

    const again = await restart(first, env);
    const records = await again.turnsEnded(opened, 3, LEASE_MS + 10_000);
    expect(records.at(-1)?.body.reason).toBe('completed');
    expect(records.filter((r) => r.envelope.kind.name === 'model.output').at(-1)?.body.text).toBe(
      '/slow 1500',
    );
    expectNoDuplicateSteps(records);
  });

  it('marks a cancel sent while the driver waits out a backoff, so it ends the turn at once after kill -9', async () => {
    const env = { DATA_DIR: await dataDir(), TURN_LINGER_MS: '2000' };
    const first = await start(env);
    const client = new TurnClient(first.url, OPERATOR_TOKEN);
    const { key } = await client.install({ retry: { attempts: 3, backoff: '60s' } });
    const opened = await client.open(key);
    await client.send(opened, 'one');
    await client.turnsEnded(opened, 1);
    // Sent while the driver lingers: its mark tells the driver its entry stands due.
    await client.send(opened, '/fail 1');
    await client.until(opened, (records) => kinds(records).includes('inference.failed'));
    // Past the linger, the driver settles its entry to the retry's time and sleeps: the
    // entry is no longer due now, so a cancel cannot be held on it and is marked.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const before = await drivingAppends(first.url);
    expect(before).toEqual({ marked: 2, held: 0 });
    await client.cancel(opened);
    expect(await drivingAppends(first.url)).toEqual({ marked: 3, held: 0 });

    // Driven at once after the restart, not when the retry would have been due.
    const again = await restart(first, env);
    const records = await again.turnsEnded(opened, 2, LEASE_MS + 10_000);
    expect(records.at(-1)?.body.reason).toBe('cancelled');
    expectNoDuplicateSteps(records);
  });

  it('keeps a retry due at its original time across kill -9 during the backoff', async () => {
    const env = { DATA_DIR: await dataDir() };
    const first = await start(env);
    const client = new TurnClient(first.url, OPERATOR_TOKEN);
    const { key } = await client.install({ retry: { attempts: 3, backoff: '3s' } });
    const opened = await client.open(key);
    await client.send(opened, '/fail 1');
    const failedLog = await client.until(opened, (records) =>
      kinds(records).includes('inference.failed'),
    );
    const failed = failedLog.find((r) => r.envelope.kind.name === 'inference.failed');
    expect(failed?.body.retry_in).toBe(3000);

    const again = await restart(first, env);
    const records = await again.turnsEnded(opened, 1, LEASE_MS + 15_000);
    const output = records.find((r) => r.envelope.kind.name === 'model.output');
    // Due at the failure's `at` + retry_in, not at the restart and not lost.
    expect(output?.envelope.at ?? 0).toBeGreaterThanOrEqual((failed?.envelope.at ?? 0) + 3000);
    expect(output?.envelope.at ?? 0).toBeLessThan(
      (failed?.envelope.at ?? 0) + 3000 + LEASE_MS + 5000,
    );
    expect(kinds(records).filter((k) => k === 'inference.failed')).toHaveLength(1);
    expectNoDuplicateSteps(records);
  });

  it('takes a long session up from its saved turn state after a restart', async () => {
    const env = { DATA_DIR: await dataDir() };
    const first = await start(env);
    const client = new TurnClient(first.url, OPERATOR_TOKEN);
    const { key } = await client.install();
    const opened = await client.open(key);
    // Past SAVE_AT_REST records: the driver saves the state when it leaves.
    const turns = Math.ceil(SAVE_AT_REST / 4) + 1;
    for (let turn = 1; turn <= turns; turn++) {
      await client.send(opened, `message number ${turn}`);
      await client.turnsEnded(opened, turn);
    }
    const before = await client.status(opened);
    const head = before.head;
    // The driver lingers, then settles, saves and leaves.
    const deadline = Date.now() + 10_000;
    while (savedCursor(env.DATA_DIR, opened.session) !== head) {
      expect(Date.now()).toBeLessThan(deadline);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    const again = await restart(first, env);
    // Restored at the head, the state answers what the replayed one answered.
    expect((await again.status(opened)).live).toEqual(before.live);
    await again.send(opened, 'and one more');
    const records = await again.turnsEnded(opened, turns + 1, 10_000);
    const outputs = records.filter((r) => r.envelope.kind.name === 'model.output');
    const [previous, last] = outputs.slice(-2);
    expect(last?.body.text).toBe('and one more');
    // The prompt grew by the new message and the previous answer only: the transcript
    // came back whole.
    const input = (r: TailRecord | undefined) => (r?.body.usage as { input: number }).input;
    expect(input(last)).toBeGreaterThan(input(previous));
    expect(input(last) - input(previous)).toBeLessThan(20);
    expectNoDuplicateSteps(records);
  });

  it('lets another process on shared stores finish the turn of a killed driver', async () => {
    // One data folder for both: it holds the keys, so each verifies the other's tokens.
    const shared = {
      DATABASE_URL: TEST_DATABASE_URL,
      REDIS_URL: TEST_REDIS_URL,
      DATA_DIR: await dataDir(),
    };
    const driver = await start(shared);
    const other = await start(shared);
    const client = new TurnClient(driver.url, OPERATOR_TOKEN);
    const { key } = await client.install();
    const opened = await client.open(key);
    await client.send(opened, '/slow 2000');
    await client.until(opened, (records) => kinds(records).includes('turn.started'));
    const killedAt = Date.now();
    await driver.kill();
    running.splice(running.indexOf(driver), 1);

    const survivor = new TurnClient(other.url, OPERATOR_TOKEN);
    const records = await survivor.turnsEnded(opened, 1, LEASE_MS + 2000 + 5000);
    expect(Date.now() - killedAt).toBeLessThan(LEASE_MS + 2000 + 5000);
    expect(records.at(-1)?.body.reason).toBe('completed');
    expectNoDuplicateSteps(records);
  });
});
