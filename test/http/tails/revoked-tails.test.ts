/**
 * Open tails of a token that stops standing: a tail is verified when it opens, and ends
 * with a last `Err token_revoked` line (a 1008 close over WebSocket) once its install key
 * is rotated, its install deleted or the console user who minted its token is removed,
 * at once when the change is made through the same process and within a few seconds when
 * it is made through another instance on the same stores. Tails whose token still stands
 * read on. Everything is reached over HTTP: the install by consent, sessions and tokens
 * from its key or the console, the key rotated and the member removed through the
 * console API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TailLine } from '../../../src/schemas/records.ts';
import {
  LOG_ONLY,
  startSecondInstance,
  startTestApp,
  type SecondInstance,
  type TestApp,
} from '../../support/app.ts';
import { listeningClient, type OpenedSession, type TurnClient } from '../../turns/turn-client.ts';
import { cursors, ndjsonTail, until, within, wsTail } from './tail-fixture.ts';

let harness: TestApp;
let client: TurnClient;
let second: SecondInstance;
let elsewhere: TurnClient;

beforeAll(async () => {
  harness = await startTestApp(LOG_ONLY);
  client = await listeningClient(harness);
  second = await startSecondInstance(harness);
  elsewhere = await listeningClient({ ...harness, app: second.app });
});
afterAll(async () => {
  await second.close();
  await harness.close();
});

const path = (opened: OpenedSession) => `/sessions/${opened.session}/events?from=1`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** `GET /sessions/{id}/token` for ada with `key`. */
async function tokenFrom(key: string, opened: OpenedSession): Promise<string> {
  const answer = await client.call('GET', `/sessions/${opened.session}/token?principal=ada`, key);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return (answer.body as OpenedSession).token;
}

/** The console's session token of `console` on the session. */
async function consoleToken(console: string, opened: OpenedSession): Promise<string> {
  const answer = await client.call('POST', `/console/sessions/${opened.session}/token`, console);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return (answer.body as OpenedSession).token;
}

/** A principal's message landed with `token`; answers its cursor. */
async function message(opened: OpenedSession, token: string, text: string): Promise<number> {
  const answer = await client.call('POST', `/sessions/${opened.session}/events`, token, [
    { kind: { name: 'message.submitted', version: 1 }, body: { text } },
  ]);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return (answer.body as { cursor: number }[])[0]?.cursor ?? 0;
}

/** The tail's last line: `Err token_revoked`, resuming after the last record it read. */
function expectRevoked(lines: readonly TailLine[], resumeAt: number): void {
  const last = lines.at(-1);
  expect(last).toMatchObject({ Err: { code: 'token_revoked', cursor: resumeAt } });
  expect(last !== undefined && 'Err' in last && last.Err.message).toMatch(/rotated or revoked/);
}

describe('open tails of a token that stops standing', () => {
  it('a key rotation here ends the tails of the old key at once; a console token reads on', async () => {
    const { key, install, owner } = await client.install();
    const opened = await client.open(key);
    const ws = await wsTail(`${client.base.replace('http', 'ws')}${path(opened)}`, {
      headers: bearer(opened.token),
    });
    const ndjson = await ndjsonTail(client.base, path(opened), bearer(opened.token));
    const byConsole = await ndjsonTail(
      client.base,
      path(opened),
      bearer(await consoleToken(owner.token, opened)),
    );
    const first = await message(opened, opened.token, 'before');
    await until(() => cursors(ws.lines).includes(first), 'the message on the WebSocket tail');
    await until(() => cursors(ndjson.lines).includes(first), 'the message on the NDJSON tail');

    const rotated = await client.call('POST', `/installs/${install}/key`, owner.token);
    expect(rotated.status).toBe(200);
    const { code } = await within(1_000, ws.closed, 'the WebSocket tail to close');
    await within(1_000, ndjson.done, 'the NDJSON tail to end');
    expect(code).toBe(1008);
    expectRevoked(ws.lines, first + 1);
    expectRevoked(ndjson.lines, first + 1);

    // The console's token never stood on the key: its tail sees what the new key's token lands.
    const after = await message(
      opened,
      await tokenFrom((rotated.body as { key: string }).key, opened),
      'after',
    );
    await until(() => cursors(byConsole.lines).includes(after), 'the console tail to read on');
    expect(byConsole.lines.some((line) => 'Err' in line)).toBe(false);
    byConsole.stop();
    await byConsole.done.catch(() => undefined);
  });

  it('a rotation through another instance ends the tail here within seconds', async () => {
    const { key, install, owner } = await client.install();
    const opened = await client.open(key);
    const ws = await wsTail(`${client.base.replace('http', 'ws')}${path(opened)}`, {
      headers: bearer(opened.token),
    });
    const first = await message(opened, opened.token, 'before');
    await until(() => cursors(ws.lines).includes(first), 'the message on the tail');
    const rotated = await elsewhere.call('POST', `/installs/${install}/key`, owner.token);
    expect(rotated.status).toBe(200);
    // Rounds every 2 s, on what the standing check caches for 1 s.
    const { code } = await within(6_000, ws.closed, 'the WebSocket tail to close');
    expect(code).toBe(1008);
    expectRevoked(ws.lines, first + 1);
  });

  it('removing the console user who minted the token ends its tail', async () => {
    const { key, owner } = await client.install();
    const opened = await client.open(key);
    const secondOwner = { ...owner, user: `u-second-${owner.user}` };
    const put = (members: { user: string; role: string }[]) =>
      client.call('PUT', '/console/tenant', owner.token, { name: 'Tail tests', members });
    expect((await put([{ user: secondOwner.user, role: 'owner' }])).status).toBe(200);
    const signedIn = await client.signIn(secondOwner);
    const tail = await ndjsonTail(
      client.base,
      path(opened),
      bearer(await consoleToken(signedIn.token, opened)),
    );
    const first = await message(opened, opened.token, 'before');
    await until(() => cursors(tail.lines).includes(first), 'the message on the tail');
    expect((await put([])).status).toBe(200);
    await within(6_000, tail.done, 'the tail to end');
    expect(tail.lines.at(-1)).toMatchObject({
      Err: { code: 'token_revoked', cursor: first + 1 },
    });
  });
});
