/**
 * A session's life over real HTTP ("Done when"): open, append with one token,
 * an identical retry, a different retry, appends under `Idempotency-Key`, status,
 * archive and a repeated archive, each answer checked against the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionOpenedBody } from '../../../src/schemas/record-kinds.ts';
import type { Envelope } from '../../../src/schemas/records.ts';
import { LOG_ONLY, startTestApp, type TestApp } from '../../support/app.ts';
import { flowOf, type TestInstall } from '../../support/flow.ts';
import { message, SessionClient } from './session-client.ts';

let harness: TestApp;
let client: SessionClient;
let install: TestInstall;

beforeAll(async () => {
  harness = await startTestApp(LOG_ONLY);
  client = await SessionClient.listen(harness);
  install = await flowOf(harness).install();
});
afterAll(async () => {
  await harness.close();
});

describe('a session over HTTP', () => {
  it('opens, appends idempotently, archives, and refuses appends after', async () => {
    const opened = await client.open(install, 'ada', { instructions: 'Be brief.', rounds: 4 });
    expect(opened.session).toMatch(/^[0-9a-f]{72}$/);
    expect(opened.expires).toBeGreaterThan(Date.now() + 59 * 60 * 1000);

    // session.opened landed at cursor 1, by the service, with the pinned config.
    const [first] = await harness.stores.log.read(opened.session, { from: 1 });
    expect(first?.envelope).toMatchObject({
      cursor: 1,
      kind: { name: 'session.opened', version: 1 },
      producer: 'service:session',
      to: null,
    });
    const openedBody = JSON.parse(first?.body ?? '{}') as SessionOpenedBody;
    expect(openedBody).toMatchObject({
      install: install.id,
      principal: 'ada',
      executor: null,
      rounds: 4,
      tools: [{ name: 'lookup', source: 'vendor' }],
    });
    expect(openedBody.config).toMatch(/^[0-9a-f]{64}$/);

    const batch = [message('hello'), { kind: { name: 'turn.cancel', version: 1 }, body: {} }];
    const landed = await client.append(opened.session, opened.token, batch);
    expect(landed.status).toBe(200);
    const envelopes = landed.body as Envelope[];
    expect(envelopes.map((e) => e.cursor)).toEqual([2, 3]);
    expect(envelopes[0]).toMatchObject({
      stream: opened.session,
      producer: 'principal:ada',
      to: null,
      kind: { name: 'message.submitted', version: 1 },
    });
    expect(envelopes[0]?.idem).toMatch(/^[A-Za-z0-9_-]+:0$/);
    expect(envelopes[1]?.idem).toMatch(/:1$/);
    // Row 12: size is the bytes of the stored canonical body (turn.cancel normalized).
    expect(envelopes[0]?.size).toBe(Buffer.byteLength('{"text":"hello"}'));
    expect(envelopes[1]?.size).toBe(Buffer.byteLength('{"turn":null}'));

    // Row 9: an identical resend answers the same envelopes and lands nothing.
    const again = await client.append(opened.session, opened.token, batch);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(envelopes);
    // A different batch under the same token key is a conflict that says what happened.
    const unkeyed = await client.refused(
      {
        method: 'POST',
        path: `/sessions/${opened.session}/events`,
        token: opened.token,
        body: [message('something else')],
      },
      409,
      'idempotency_conflict',
    );
    expect(unkeyed.message).toMatch(
      /^this token already wrote a different batch, and without an Idempotency-Key header a token writes one batch only/,
    );

    // Under Idempotency-Key one token writes many batches, each idempotent on its own.
    const keyed = await client.append(opened.session, opened.token, [message('one')], 'k-1');
    expect((keyed.body as Envelope[]).map((e) => e.cursor)).toEqual([4]);
    const second = await client.append(opened.session, opened.token, [message('two')], 'k-2');
    expect((second.body as Envelope[]).map((e) => e.cursor)).toEqual([5]);
    const replay = await client.append(opened.session, opened.token, [message('one')], 'k-1');
    expect(replay.body).toEqual(keyed.body);
    const keyedConflict = await client.refused(
      {
        method: 'POST',
        path: `/sessions/${opened.session}/events`,
        token: opened.token,
        headers: { 'idempotency-key': 'k-1' },
        body: [message('not one')],
      },
      409,
      'idempotency_conflict',
    );
    expect(keyedConflict.message).toContain('under this Idempotency-Key');

    const status = await client.call({
      method: 'GET',
      path: `/sessions/${opened.session}/status`,
      token: opened.token,
    });
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({
      archived: false,
      head: 5,
      id: opened.session,
      live: { phase: 'idle', turn: null, round: null, prompt_tokens: 0, pending: [] },
    });

    const archive = { method: 'POST', path: `/sessions/${opened.session}/archive` } as const;
    const archived = await client.call({ ...archive, headers: install.headers });
    expect(archived.status).toBe(200);
    expect(archived.body).toMatchObject({
      archived: true,
      head: 6,
      live: { phase: 'ended' },
    });
    const [final] = await harness.stores.log.read(opened.session, { from: 6 });
    expect(final?.envelope.kind.name).toBe('session.archived');
    expect(JSON.parse(final?.body ?? '{}')).toEqual({ by: 'install' });

    // Row 60: a repeat answers the same and lands nothing.
    const repeat = await client.call({ ...archive, headers: install.headers });
    expect(repeat.status).toBe(200);
    expect(repeat.body).toEqual(archived.body);
    expect((await harness.stores.log.head(opened.session))?.head).toBe(6);

    // 3.1 row 3: nothing lands again; the identical resends still replay.
    await client.refused(
      {
        method: 'POST',
        path: `/sessions/${opened.session}/events`,
        token: opened.token,
        headers: { 'idempotency-key': 'k-3' },
        body: [message('too late')],
      },
      409,
      'session_archived',
    );
    expect((await client.append(opened.session, opened.token, batch)).body).toEqual(envelopes);

    const ended = await client.call({
      method: 'GET',
      path: `/sessions/${opened.session}/status`,
      token: opened.token,
    });
    expect(ended.body).toEqual(archived.body);
  });

  it('mints fresh tokens for a session the install owns, archived or not (row 64)', async () => {
    const opened = await client.open(install, 'ada');
    const fresh = await client.call({
      method: 'GET',
      path: `/sessions/${opened.session.toUpperCase()}/token?principal=grace`,
      headers: install.headers,
    });
    expect(fresh.status).toBe(200);
    const token = fresh.body as { session: string; token: string };
    expect(token.session).toBe(opened.session);
    expect(token.token).not.toBe(opened.token);
    // The fresh token writes as the vouched principal, with a key of its own.
    const landed = await client.append(opened.session, token.token, [message('hi')]);
    expect((landed.body as Envelope[])[0]?.producer).toBe('principal:grace');
    const mine = await client.append(opened.session, opened.token, [message('hi')]);
    expect((mine.body as Envelope[])[0]?.cursor).toBe(3);

    await client.call({
      method: 'POST',
      path: `/sessions/${opened.session}/archive`,
      headers: install.headers,
    });
    const afterArchive = await client.call({
      method: 'GET',
      path: `/sessions/${opened.session}/token?principal=ada`,
      headers: install.headers,
    });
    expect(afterArchive.status).toBe(200);
  });
});
