/**
 * Test apps on the one PostgreSQL server share nothing (`database-schema.ts`): test files
 * run in parallel, and an app whose turn runtime found another's sessions due drove them.
 * Here an app on Redis and PostgreSQL, as another file would start, runs beside an app
 * on PostgreSQL whose sessions are due as soon as they open (an idle archive of 0) and
 * which does not sweep them itself, so only the other app's sweep could take them up.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { kinds, listeningClient, type TurnClient } from '../turns/turn-client.ts';
import { startTestApp, type TestApp } from './app.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from './services.ts';

let first: TestApp | undefined;
let other: TestApp | undefined;
let client: TurnClient;
let stranger: TurnClient;

beforeAll(async () => {
  first = await startTestApp({
    databaseUrl: TEST_DATABASE_URL,
    turns: { idleArchiveMs: 0, sweepMs: 3_600_000 },
  });
  other = await startTestApp({ databaseUrl: TEST_DATABASE_URL, redisUrl: TEST_REDIS_URL });
  client = await listeningClient(first);
  stranger = await listeningClient(other);
});
afterAll(async () => {
  await first?.close();
  await other?.close();
});

it("keeps its sessions from another app's turns: its own archive lands session.archived", async () => {
  const { key } = await client.install();
  const opened = await client.open(key);
  // Five of the other app's sweeps. On shared tables one drove the session on its own,
  // empty log, archived it as idle there, and the archive below answered as a repeat.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await client.archive(key, opened);
  expect(kinds(await client.log(opened))).toEqual(['session.opened', 'session.archived']);
  // Nor does the other app know the install.
  const foreign = await stranger.call('POST', `/sessions/${opened.session}/archive`, key);
  expect(foreign.status).toBe(401);
});
