import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LOG_ONLY,
  startSecondInstance,
  startTestApp,
  type SecondInstance,
  type TestApp,
  type TestAppOptions,
} from '../../support/app.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../../support/services.ts';
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
} from './tail-fixture.ts';

describe.each<[string, TestAppOptions]>([
  ['Redis', { redisUrl: TEST_REDIS_URL }],
  ['PostgreSQL', { databaseUrl: TEST_DATABASE_URL }],
])('two service instances sharing %s', (_backend, options) => {
  let reader: TestApp;
  let writer: TestApp;
  let second: SecondInstance;
  let base: string;

  beforeAll(async () => {
    // Each instance has its own store connections and its own fan-out.
    reader = await startTestApp({ ...LOG_ONLY, ...options });
    second = await startSecondInstance(reader);
    writer = { ...reader, app: second.app };
    base = await reader.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await second.close();
    await reader.close();
  });

  it('a tail on one sees the records appended on the other, and their archive', async () => {
    const session = await openTestSession(reader);
    const token = await tokenFor(reader, session);
    const headers = { authorization: `Bearer ${token}` };
    const path = `/sessions/${session.id}/events?from=1`;
    const ndjson = await ndjsonTail(base, path, headers);
    const ws = await wsTail(`${base.replace('http', 'ws')}${path}`, { headers });
    for (let i = 0; i < 50; i += 1) {
      await append(writer, session, [record('message.submitted', { text: `w${i}` })]);
    }
    await archive(writer, session);
    await within(10_000, ndjson.done, 'the NDJSON tail');
    await within(10_000, ws.done, 'the WebSocket tail');
    const expected = Array.from({ length: 52 }, (_, i) => i + 1);
    expect(cursors(ndjson.lines)).toEqual(expected);
    expect(ws.lines).toEqual(ndjson.lines);
  });
});
