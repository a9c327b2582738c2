/**
 * Token lifetimes: a session token stops working when what it stands on
 * goes away, at once in the process that made the change. Everything is reached the way
 * users reach it, over HTTP: the install through propose, consent and poll, sessions and
 * tokens from its key or the console, the key rotated, revoked and the install deleted
 * through the console API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.ts';
import {
  listeningClient,
  type OpenedSession,
  type Owner,
  type TurnClient,
} from '../../turns/turn-client.ts';

let harness: TestApp;
let client: TurnClient;

beforeAll(async () => {
  harness = await startTestApp();
  client = await listeningClient(harness);
});
afterAll(async () => {
  await harness.close();
});

/** The status a session token gets for its session's status. */
async function statusWith(opened: OpenedSession): Promise<number> {
  return (await client.call('GET', `/sessions/${opened.session}/status`, opened.token)).status;
}

/** A principal's message with `opened`'s token; answers the status. */
async function appendWith(opened: OpenedSession): Promise<number> {
  const body = [{ kind: { name: 'message.submitted', version: 1 }, body: { text: 'hello' } }];
  return (await client.call('POST', `/sessions/${opened.session}/events`, opened.token, body))
    .status;
}

/** `GET /sessions/{id}/token` with `key`, as a fresh session answer. */
async function fresh(key: string, opened: OpenedSession): Promise<OpenedSession> {
  const answer = await client.call('GET', `/sessions/${opened.session}/token?principal=ada`, key);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as OpenedSession;
}

/** The owner's console token on the session (`console:<user>`). */
async function consoleSession(owner: Owner, opened: OpenedSession): Promise<OpenedSession> {
  const answer = await client.call(
    'POST',
    `/console/sessions/${opened.session}/token`,
    owner.token,
  );
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body as OpenedSession;
}

describe('session tokens after a key rotation or revocation', () => {
  it('refuses a token minted before a key rotation with 401 after it', async () => {
    const { key, install, owner } = await client.install();
    const opened = await client.open(key);
    const reissued = await fresh(key, opened);
    const byConsole = await consoleSession(owner, opened);
    expect(await statusWith(opened)).toBe(200);
    expect(await appendWith(reissued)).toBe(200);

    const rotated = await client.call('POST', `/installs/${install}/key`, owner.token);
    expect(rotated.status).toBe(200);
    const newKey = (rotated.body as { key: string }).key;

    // Both tokens the old key minted are refused at once, reads and appends alike.
    for (const token of [opened, reissued]) {
      const refused = await client.call('GET', `/sessions/${token.session}/status`, token.token);
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({ code: 'invalid_token' });
      expect(await appendWith(token)).toBe(401);
    }
    // A token from the new key works; the console's token never stood on the key.
    const renewed = await fresh(newKey, opened);
    expect(await statusWith(renewed)).toBe(200);
    expect(await appendWith(renewed)).toBe(200);
    expect(await statusWith(byConsole)).toBe(200);
  });

  it('refuses the tokens of a revoked key, and a tail opened with one', async () => {
    const { key, install, owner } = await client.install();
    const opened = await client.open(key);
    const revoked = await client.call('DELETE', `/installs/${install}/key`, owner.token);
    expect(revoked.status).toBe(204);
    expect(await statusWith(opened)).toBe(401);
    const tail = await fetch(`${client.base}/sessions/${opened.session}/events?from=1&to=2`, {
      headers: { authorization: `Bearer ${opened.token}` },
    });
    expect(tail.status).toBe(401);
  });
});

describe('session tokens of a deleted install', () => {
  it('refuses every token of its sessions, the console-minted ones included', async () => {
    const { key, install, owner } = await client.install();
    const opened = await client.open(key);
    const byConsole = await consoleSession(owner, opened);
    expect(await statusWith(byConsole)).toBe(200);
    const deleted = await client.call('DELETE', `/installs/${install}`, owner.token);
    expect(deleted.status).toBe(204);
    expect(await statusWith(opened)).toBe(401);
    expect(await statusWith(byConsole)).toBe(401);
  });
});

describe('console tokens of a removed member', () => {
  it("refuses the member's console token and the session token it minted, at once", async () => {
    const { key, owner } = await client.install();
    const opened = await client.open(key);
    // A second owner, who mints a session token and is then removed by the first.
    const second = { ...owner, user: `u-second-${owner.user}` };
    const put = (token: string, members: { user: string; role: string }[]) =>
      client.call('PUT', '/console/tenant', token, { name: 'Turn tests', members });
    expect((await put(owner.token, [{ user: second.user, role: 'owner' }])).status).toBe(200);
    const signedIn = await client.signIn(second);
    const bySecond = await consoleSession(signedIn, opened);
    expect(await statusWith(bySecond)).toBe(200);

    expect((await put(owner.token, [])).status).toBe(200);
    const memberships = await client.call('GET', '/console/memberships', signedIn.token);
    expect(memberships.status).toBe(401);
    expect(memberships.body).toMatchObject({ code: 'invalid_token' });
    expect(await statusWith(bySecond)).toBe(401);
    // The remaining owner is untouched.
    expect((await client.call('GET', '/console/memberships', owner.token)).status).toBe(200);
  });
});
