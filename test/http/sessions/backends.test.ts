/**
 * The session core on every backend: the embedded default (SQLite),
 * Redis for the log with `REDIS_URL`, and PostgreSQL for the control store, each run by
 * two service instances sharing the stores, as two processes would (their own store
 * connections, actor hosts and caches; the same key material).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Envelope } from '../../../src/schemas/records.ts';
import {
  LOG_ONLY,
  startSecondInstance,
  startTestApp,
  type SecondInstance,
  type TestApp,
  type TestAppOptions,
} from '../../support/app.ts';
import { flowOf, type TestInstall } from '../../support/flow.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../../support/services.ts';
import { message, SessionClient, type Opened } from './session-client.ts';

const backends: [string, TestAppOptions][] = [
  ['the embedded default', {}],
  ['Redis', { redisUrl: TEST_REDIS_URL }],
  ['PostgreSQL', { databaseUrl: TEST_DATABASE_URL }],
];

describe.each(backends)('sessions on %s', (_name, options) => {
  let first: TestApp;
  let second: SecondInstance;
  let a: SessionClient;
  let b: SessionClient;
  let install: TestInstall;

  beforeAll(async () => {
    first = await startTestApp({ ...LOG_ONLY, ...options });
    second = await startSecondInstance(first);
    a = await SessionClient.listen(first);
    b = await SessionClient.listen({ ...first, app: second.app });
    install = await flowOf(first).install();
  });
  afterAll(async () => {
    await second.close();
    await first.close();
  });

  const cursors = (envelopes: unknown) => (envelopes as Envelope[]).map((e) => e.cursor);

  it('opens on one instance and appends, replays and refuses on the other', async () => {
    const opened: Opened = await a.open(install);
    const batch = [message('hello'), message('again')];
    const landed = await b.append(opened.session, opened.token, batch);
    expect(landed.status).toBe(200);
    expect(cursors(landed.body)).toEqual([2, 3]);
    expect((await a.append(opened.session, opened.token, batch)).body).toEqual(landed.body);
    await a.refused(
      {
        method: 'POST',
        path: `/sessions/${opened.session}/events`,
        token: opened.token,
        body: [message('different')],
      },
      409,
      'idempotency_conflict',
    );
    const token = await b.call({
      method: 'GET',
      path: `/sessions/${opened.session}/token?principal=ada`,
      headers: install.headers,
    });
    expect(token.status).toBe(200);
  });

  it('keeps cursors gapless under concurrent appends through both instances', async () => {
    const opened = await a.open(install);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? a : b).append(opened.session, opened.token, [message(`m${i}`)], `k-${i}`),
      ),
    );
    const all = answers.flatMap((answer) => cursors(answer.body)).sort((x, y) => x - y);
    expect(all).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
  });

  it('archives on one instance; the other refuses appends and answers the same archive', async () => {
    const opened = await a.open(install);
    await b.append(opened.session, opened.token, [message('before')]);
    const archive = {
      method: 'POST',
      path: `/sessions/${opened.session}/archive`,
      headers: install.headers,
    } as const;
    const archived = await a.call(archive);
    expect(archived.body).toMatchObject({ archived: true, head: 3, live: { phase: 'ended' } });
    await b.refused(
      {
        method: 'POST',
        path: `/sessions/${opened.session}/events`,
        token: opened.token,
        headers: { 'idempotency-key': 'late' },
        body: [message('after')],
      },
      409,
      'session_archived',
    );
    expect((await b.call(archive)).body).toEqual(archived.body);
    const status = await b.call({
      method: 'GET',
      path: `/sessions/${opened.session}/status`,
      token: opened.token,
    });
    expect(status.body).toEqual(archived.body);
  });
});
