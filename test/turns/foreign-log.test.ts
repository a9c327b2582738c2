/**
 * A process whose log store holds no record of a session leaves the session alone. Two
 * processes that share PostgreSQL but not their log store (one keeps logs in PostgreSQL,
 * one in Redis) are a misconfigured deployment: the work store's due index is shared, so
 * the second process's sweep finds the first one's sessions due. Its log holds nothing of
 * them, and a replay of nothing looks idle since 1970: it must neither drive nor archive
 * such a session (it logs an error saying why, and looks again later).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ownSchema, type OwnSchema } from '../support/database-schema.ts';
import { startService, type ServiceProcess } from '../support/service-process.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/services.ts';
import { kinds, TurnClient } from './turn-client.ts';

const OPERATOR_TOKEN = randomBytes(32).toString('base64url');
const running: ServiceProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.kill()));
});
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

async function deployment(): Promise<{ schema: OwnSchema; dir: string }> {
  const schema = await ownSchema(TEST_DATABASE_URL);
  const dir = await mkdtemp(path.join(tmpdir(), 'foreign-log-'));
  cleanups.push(
    () => schema.drop(),
    () => rm(dir, { recursive: true, force: true }),
  );
  return { schema, dir };
}

async function start(env: Record<string, string>): Promise<ServiceProcess> {
  const service = await startService({
    OPERATOR_TOKEN,
    BASE_URL: 'http://foreign.example',
    LEASE_MS: '1500',
    TURN_SWEEP_MS: '200',
    // Due soon after it opens: the sweep of any process on the work store looks at it.
    SESSION_IDLE_ARCHIVE: '2s',
    ...env,
  });
  running.push(service);
  return service;
}

describe('a session whose log is in another store', () => {
  it('is neither driven nor archived by a process on another log store', async () => {
    const { schema, dir } = await deployment();
    const shared = { DATABASE_URL: schema.url, DATA_DIR: dir };
    const first = await start(shared);
    const client = new TurnClient(first.url, OPERATOR_TOKEN);
    const { key } = await client.install();
    const opened = await client.open(key);
    await first.kill();
    running.splice(running.indexOf(first), 1);

    // The same PostgreSQL, another log store: its sweep finds the session due once the
    // idle archive time has come and the first process's lease has lapsed.
    const other = await start({ ...shared, REDIS_URL: TEST_REDIS_URL });
    // Its sweep runs every 200 ms: 6 s is the idle time, the lapse and many sweeps over.
    await new Promise((resolve) => setTimeout(resolve, 6000));
    await other.kill();
    running.splice(running.indexOf(other), 1);

    // Back on its own log the session was left as it was: it runs a turn, and its
    // archive lands (a session archived elsewhere would answer as a repeat, landing nothing).
    const again = await start(shared);
    const owner = new TurnClient(again.url, OPERATOR_TOKEN);
    await owner.send(opened, 'still here?');
    const turned = await owner.turnsEnded(opened, 1);
    expect(turned.at(-1)?.body.reason).toBe('completed');
    await owner.archive(key, opened);
    expect(kinds(await owner.log(opened)).at(-1)).toBe('session.archived');
  });
});
