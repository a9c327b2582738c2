import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionTokens } from '../../../src/sessions/tokens.ts';
import { LOG_ONLY, startTestApp, type TestApp } from '../../support/app.ts';
import {
  append,
  archive,
  cursors,
  ndjsonTail,
  openTestSession,
  record,
  tokenFor,
  until,
  within,
  wsTail,
} from './tail-fixture.ts';

let harness: TestApp;
let base: string;

beforeAll(async () => {
  harness = await startTestApp(LOG_ONLY);
  base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await harness.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const messages = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => record('message.submitted', { text: `m${from + i}` }));

describe('GET /sessions/{id}/events refuses', () => {
  async function problem(url: string, headers: Record<string, string> = {}) {
    const response = await harness.app.inject({ method: 'GET', url, headers });
    return {
      status: response.statusCode,
      body: response.json<Record<string, unknown>>(),
      response,
    };
  }

  it('a missing, negative or unparsable from, and a to below 1, with 400 naming the field', async () => {
    const session = await openTestSession(harness);
    const headers = bearer(await tokenFor(harness, session));
    for (const query of [
      '',
      '?from=-1',
      '?from=abc',
      '?from=1.5',
      '?from=1&to=0',
      '?from=1&to=x',
    ]) {
      const { status, body } = await problem(`/sessions/${session.id}/events${query}`, headers);
      expect(status, query).toBe(400);
      expect(String(body.field), query).toMatch(/^query\.(from|to)$/);
    }
  });

  it('a request without a token, or with one that does not verify, with 401', async () => {
    const session = await openTestSession(harness);
    const none = await problem(`/sessions/${session.id}/events?from=1`);
    expect(none.status).toBe(401);
    expect(none.response.headers['www-authenticate']).toBe('Bearer');
    const forged = await problem(`/sessions/${session.id}/events?from=1`, bearer('a.b.c'));
    expect(forged.status).toBe(401);
    expect(forged.body.code).toBe('invalid_token');
    // A console token is for another audience.
    const console = await harness.deps.tokens.mint(
      'console',
      { sub: 'console:u', tid: 't' },
      60_000,
    );
    expect(
      (await problem(`/sessions/${session.id}/events?from=1`, bearer(console.token))).status,
    ).toBe(401);
  });

  it('a token for another session, or an id of the wrong shape, with 403 does_not_attach', async () => {
    const session = await openTestSession(harness);
    const other = await openTestSession(harness);
    const headers = bearer(await tokenFor(harness, session));
    for (const id of [other.id, session.id.slice(0, 64), `${session.id}00`, 'z'.repeat(72)]) {
      const { status, body } = await problem(`/sessions/${id}/events?from=1`, headers);
      expect(status, id).toBe(403);
      expect(body.code).toBe('does_not_attach');
    }
    // Hex case does not matter (decisions row 6).
    const upper = await ndjsonTail(
      base,
      `/sessions/${session.id.toUpperCase()}/events?from=1&to=2`,
      headers,
    );
    expect(upper.status).toBe(200);
    await within(5_000, upper.done, 'the tail of an upper-case id');
    expect(cursors(upper.lines)).toEqual([1]);
  });

  it('a token without the read scope with 403', async () => {
    const session = await openTestSession(harness);
    const token = await tokenFor(harness, session, 'principal:ada', ['append']);
    const { status, body } = await problem(`/sessions/${session.id}/events?from=1`, bearer(token));
    expect(status).toBe(403);
    expect(body.code).toBe('insufficient_scope');
  });
});

describe('the NDJSON tail', () => {
  it('answers application/jsonstream and follows records as they land, in order', async () => {
    const session = await openTestSession(harness);
    const tail = await ndjsonTail(
      base,
      `/sessions/${session.id}/events?from=1`,
      bearer(await tokenFor(harness, session)),
    );
    expect(tail.status).toBe(200);
    expect(tail.type).toBe('application/jsonstream');
    for (let i = 0; i < 20; i += 1) await append(harness, session, messages(1, i));
    await until(() => tail.lines.length === 21, '21 lines');
    expect(cursors(tail.lines)).toEqual(Array.from({ length: 21 }, (_, i) => i + 1));
    const first = tail.lines[1];
    expect(first).toMatchObject({
      Ok: {
        envelope: { cursor: 2, stream: session.id, producer: 'principal:ada', to: null },
        body: { text: 'm0' },
      },
    });
    await archive(harness, session);
    await within(5_000, tail.done, 'the tail to end after session.archived');
    expect(cursors(tail.lines)).toHaveLength(22);
    expect(tail.lines.at(-1)).toMatchObject({
      Ok: { envelope: { kind: { name: 'session.archived' } } },
    });
  });

  it('starts at from and ends before to', async () => {
    const session = await openTestSession(harness);
    await append(harness, session, messages(9));
    const headers = bearer(await tokenFor(harness, session));
    const tail = await ndjsonTail(base, `/sessions/${session.id}/events?from=3&to=7`, headers);
    await within(5_000, tail.done, 'a tail with to');
    expect(cursors(tail.lines)).toEqual([3, 4, 5, 6]);
    // `to` ahead of the head waits for the records before it, then ends.
    const ahead = await ndjsonTail(base, `/sessions/${session.id}/events?from=0&to=13`, headers);
    await until(() => ahead.lines.length === 10, 'the records so far');
    await append(harness, session, messages(5, 100));
    await within(5_000, ahead.done, 'a tail reaching to');
    expect(cursors(ahead.lines)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
  });

  it('of an archived session replays the log and ends', async () => {
    const session = await openTestSession(harness);
    await append(harness, session, messages(3));
    await archive(harness, session);
    const tail = await ndjsonTail(
      base,
      `/sessions/${session.id}/events?from=2`,
      bearer(await tokenFor(harness, session)),
    );
    await within(5_000, tail.done, 'the tail of an archived session');
    expect(cursors(tail.lines)).toEqual([2, 3, 4, 5]);
  });

  it('ends at token expiry with Err token_expired', async () => {
    const session = await openTestSession(harness);
    const { token } = await harness.deps.tokens.mint(
      'session',
      { sub: 'principal:ada', sid: session.id, idk: 'k', scp: ['read'], tid: session.tenant },
      1_500,
    );
    const tail = await ndjsonTail(base, `/sessions/${session.id}/events?from=1`, bearer(token));
    const ws = await wsTail(`${base.replace('http', 'ws')}/sessions/${session.id}/events?from=1`, {
      headers: bearer(token),
    });
    await within(5_000, tail.done, 'the tail to end at expiry');
    expect(cursors(tail.lines)).toEqual([1]);
    expect(tail.lines.at(-1)).toEqual({
      Err: { code: 'token_expired', message: expect.any(String) as string, cursor: 2 },
    });
    const closed = await within(5_000, ws.closed, 'the WebSocket tail to end at expiry');
    expect(closed.code).toBe(1008);
    expect(ws.lines.at(-1)).toMatchObject({ Err: { code: 'token_expired' } });
  });
});

describe('the WebSocket tail', () => {
  it('serves the same lines as NDJSON, in the same order, at the same time', async () => {
    const session = await openTestSession(harness);
    const token = await tokenFor(harness, session);
    const url = `${base.replace('http', 'ws')}/sessions/${session.id}/events?from=1`;
    const ndjson = await ndjsonTail(base, `/sessions/${session.id}/events?from=1`, bearer(token));
    const ws = await wsTail(url, { headers: bearer(token) });
    const writes = (async () => {
      for (let i = 0; i < 30; i += 1) await append(harness, session, messages(1 + (i % 3), i * 3));
    })();
    await writes;
    await archive(harness, session);
    await within(5_000, ndjson.done, 'the NDJSON tail to end');
    const closed = await within(5_000, ws.closed, 'the WebSocket tail to end');
    expect(closed).toEqual({ code: 1000, reason: 'the tail ended' });
    expect(ws.lines).toEqual(ndjson.lines);
    const seen = cursors(ws.lines);
    expect(seen).toEqual(Array.from({ length: seen.length }, (_, i) => i + 1));
    expect(seen.length).toBe(1 + 60 + 1);
  });

  it('takes the token as access_token or as the bearer subprotocol, and answers bearer', async () => {
    const session = await openTestSession(harness);
    const token = await tokenFor(harness, session);
    const url = `${base.replace('http', 'ws')}/sessions/${session.id}/events?from=1&to=2`;
    const byQuery = await wsTail(`${url}&access_token=${token}`);
    const byProtocol = await wsTail(url, { protocols: ['bearer', token] });
    expect(byProtocol.socket.protocol).toBe('bearer');
    for (const tail of [byQuery, byProtocol]) {
      expect(await within(5_000, tail.closed, 'the tail to end')).toMatchObject({ code: 1000 });
      expect(cursors(tail.lines)).toEqual([1]);
    }
    // A plain HTTP tail does not read access_token: the header is its only carrier.
    const plain = await harness.app.inject({
      method: 'GET',
      url: `/sessions/${session.id}/events?from=1&access_token=${token}`,
    });
    expect(plain.statusCode).toBe(401);
  });

  it('refuses an upgrade without a token, or for another session, as HTTP', async () => {
    const session = await openTestSession(harness);
    const other = await openTestSession(harness);
    const url = `${base.replace('http', 'ws')}/sessions/${session.id}/events?from=1`;
    await expect(wsTail(url)).rejects.toThrow('upgrade refused: 401');
    await expect(
      wsTail(url, { protocols: ['bearer', await tokenFor(harness, other)] }),
    ).rejects.toThrow('upgrade refused: 403');
    await expect(
      wsTail(`${base.replace('http', 'ws')}/sessions/${session.id}/events`, {
        headers: bearer(await tokenFor(harness, session)),
      }),
    ).rejects.toThrow('upgrade refused: 400');
  });
});

describe('graceful shutdown', () => {
  it('ends NDJSON and WebSocket tails cleanly', async () => {
    const own = await startTestApp(LOG_ONLY);
    const url = await own.app.listen({ port: 0, host: '127.0.0.1' });
    const session = await openTestSession(own);
    const token = await new SessionTokens({
      tokens: own.deps.tokens,
      clock: own.deps.clock,
      entropy: own.deps.entropy,
    }).mint({ session: session.id, producer: 'principal:ada', tenant: session.tenant });
    const ndjson = await ndjsonTail(
      url,
      `/sessions/${session.id}/events?from=1`,
      bearer(token.token),
    );
    const ws = await wsTail(`${url.replace('http', 'ws')}/sessions/${session.id}/events?from=1`, {
      headers: bearer(token.token),
    });
    await until(() => ndjson.lines.length === 1 && ws.lines.length === 1, 'the first record');
    await within(10_000, own.close(), 'the app to close');
    await within(5_000, ndjson.done, 'the NDJSON tail to end');
    expect(ndjson.lines.at(-1)).toMatchObject({ Err: { code: 'service_stopping', cursor: 2 } });
    expect((await within(5_000, ws.closed, 'the WebSocket tail to end')).code).toBe(1001);
  });
});
