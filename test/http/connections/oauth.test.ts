import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src/clock.ts';
import { ControlOAuthStore } from '../../../src/connections/oauth-store.ts';
import type {
  AuthorizeAnswer,
  Connection,
  PutConnectionAnswer,
} from '../../../src/schemas/connections.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner, type ConsoleUser } from '../../support/console.ts';
import { startEverything, type EverythingServer } from '../../mcp/peers/everything.ts';
import { startOAuthServer, type OAuthServer } from '../../mcp/peers/oauth-server.ts';
import { ConsoleClient, expectOk, expectProblem, type Answer } from '../console/console-client.ts';

let harness: TestApp;
let client: ConsoleClient;
let peer: OAuthServer;
let everything: EverythingServer;
/** Every credential the flow minted: none may appear in an answer, the log or the store. */
const minted: string[] = [];

beforeAll(async () => {
  [harness, peer, everything] = await Promise.all([
    startTestApp(),
    startOAuthServer(),
    startEverything(),
  ]);
  client = await ConsoleClient.of(harness);
});
afterAll(async () => {
  await Promise.all([harness.close(), peer.close(), everything.close()]);
});

/** The service's own origin in the test app (`BASE_URL`). */
const BASE = 'http://127.0.0.1';
const RETURN_TO = `${BASE}/console/connections/notes`;

const link = async (owner: ConsoleUser, endpoint = peer.endpoint) =>
  keep(
    await client.call({
      method: 'PUT',
      url: '/connections/notes',
      headers: owner.headers,
      payload: { name: 'notes', endpoint, return_to: RETURN_TO },
    }),
  );
const authorizeAgain = async (owner: ConsoleUser) =>
  keep(
    await client.call({
      method: 'POST',
      url: '/connections/notes/authorize',
      headers: owner.headers,
    }),
  );
const read = async (owner: ConsoleUser) =>
  expectOk(
    await client.call({ method: 'GET', url: '/connections/notes', headers: owner.headers }),
    200,
  ) as Connection;

/** Plays the owner's browser at the authorization server: answers the callback's query. */
async function approve(authorize: string): Promise<string> {
  const response = await fetch(authorize, { redirect: 'manual' });
  expect(response.status).toBe(302);
  const callback = new URL(response.headers.get('location') ?? '');
  expect(`${callback.origin}${callback.pathname}`).toBe(`${BASE}/connections/callback`);
  minted.push(callback.searchParams.get('code') ?? '');
  return callback.search;
}

/**
 * The owner's browser: the cookies the answers that handed out authorization URLs set
 *, sent back on every callback.
 */
const jar = new Map<string, string>();

/** Keeps the cookies `answer` sets, as a browser would. */
function keep(answer: Answer): Answer {
  const header = answer.headers['set-cookie'];
  for (const line of [header ?? []].flat()) {
    const [pair = ''] = line.split(';');
    const at = pair.indexOf('=');
    if (line.includes('Max-Age=0;')) jar.delete(pair.slice(0, at));
    else jar.set(pair.slice(0, at), pair.slice(at + 1));
  }
  return answer;
}

/** The browser arriving back at the service: no console token, the owner's cookies. */
const callback = async (query: string, cookies: ReadonlyMap<string, string> = jar) =>
  keep(
    await client.call({
      method: 'GET',
      url: `/connections/callback${query}`,
      headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
    }),
  );

function redirectedTo(answer: Answer): string {
  expect(answer.status, answer.text).toBe(303);
  return String(answer.headers.location);
}

/** Remembers the connection's stored credentials, to prove they never leak. */
async function noteTokens(owner: ConsoleUser): Promise<void> {
  const oauth = new ControlOAuthStore(
    harness.stores.control,
    harness.keys.secretsKey,
    systemClock,
  ).forEndpoint(peer.endpoint);
  const ref = { tenant: owner.tenant, connection: 'notes' };
  const [tokens, client] = await Promise.all([oauth.loadTokens(ref), oauth.loadClient(ref)]);
  minted.push(tokens?.access_token ?? '', tokens?.refresh_token ?? '');
  if (client !== undefined && 'client_secret' in client && client.client_secret !== undefined) {
    minted.push(client.client_secret);
  }
}

/** No token, code or client secret in any answer, the log, or the rows kept at rest. */
async function expectNoLeak(owner: ConsoleUser): Promise<void> {
  const secrets = minted.filter((value) => value.length > 8);
  expect(secrets.length).toBeGreaterThanOrEqual(6);
  const rows = JSON.stringify([
    ...(await harness.stores.control.list('oauth_state', '')),
    ...(await harness.stores.control.list('oauth_state', owner.tenant)),
    ...(await harness.stores.control.list('connection', owner.tenant)),
  ]);
  expect(rows).toContain('sealed');
  for (const text of [...client.texts, harness.logs.text(), rows]) {
    for (const secret of secrets) expect(text).not.toContain(secret);
  }
}

describe('linking an OAuth-protected server over HTTP', () => {
  it('authorizes, links, relinks, and reads as needing authorization once the grant is gone', async () => {
    const owner = await newOwner(harness);

    // PUT without a credential: the server demands authorization.
    const started = expectOk(await link(owner), 201) as PutConnectionAnswer;
    expect(started).toMatchObject({
      outcome: 'created',
      connection: { state: 'authorizing', catalog: null, auth: { kind: 'oauth' } },
    });
    const authorize = new URL(started.authorize ?? '');
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${peer.issuer}/authorize`);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${BASE}/connections/callback`);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');

    // Still unauthorized, a new PUT is replaced with a new URL, never unchanged.
    const again = expectOk(await link(owner), 200) as PutConnectionAnswer;
    expect(again.outcome).toBe('replaced');
    expect(again.authorize).not.toBe(started.authorize);

    // The owner approves; the callback finishes the link and sends the browser back.
    const query = await approve(again.authorize ?? '');
    expect(redirectedTo(await callback(query))).toBe(RETURN_TO);
    const linked = await read(owner);
    expect(linked).toMatchObject({
      state: 'linked',
      auth: { kind: 'oauth', issuer: `${peer.issuer}/` },
    });
    expect(linked.catalog?.tools.map((tool) => tool.name)).toEqual(['add', 'echo', 'whoami']);
    await noteTokens(owner);

    // Single use: the same callback again is refused.
    expectProblem(await callback(query), 400, 'invalid_state', 'query.state');
    // The first URL's authorization was never used; the server's earlier one still opens.
    const relinked = expectOk(await link(owner), 200) as PutConnectionAnswer;
    expect(relinked.outcome).toBe('unchanged');
    expect(relinked.authorize).toBeUndefined();
    expect(peer.authority.counts).toMatchObject({ registrations: 1, codeExchanges: 1 });

    // Tokens revoked, refresh refused: the connection reads as needing authorization.
    peer.authority.revokeAll();
    peer.authority.failRefresh(true);
    expect(await read(owner)).toMatchObject({ state: 'authorizing', catalog: linked.catalog });
    const fresh = expectOk(await authorizeAgain(owner), 200) as AuthorizeAnswer;
    expect(new URL(fresh.authorize).searchParams.get('client_id')).toBe(
      authorize.searchParams.get('client_id'),
    );

    // The owner declines first: the connection stays as it is.
    const declined = new URLSearchParams({
      error: 'access_denied',
      state: new URL(fresh.authorize).searchParams.get('state') ?? '',
    });
    const back = new URL(redirectedTo(await callback(`?${declined.toString()}`)));
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(`${back.origin}${back.pathname}`).toBe(RETURN_TO);
    expect((await read(owner)).state).toBe('authorizing');

    // A fresh URL, approved: linked again.
    peer.authority.failRefresh(false);
    const retry = expectOk(await authorizeAgain(owner), 200) as AuthorizeAnswer;
    expect(redirectedTo(await callback(await approve(retry.authorize)))).toBe(RETURN_TO);
    expect((await read(owner)).state).toBe('linked');
    await noteTokens(owner);
    await expectNoLeak(owner);
  });

  it('keeps a linked connection linked while a fresh URL waits, and through failed callbacks', async () => {
    const own = await startOAuthServer();
    try {
      const owner = await newOwner(harness);
      const put = async () =>
        keep(
          await client.call({
            method: 'PUT',
            url: '/connections/notes',
            headers: owner.headers,
            payload: { name: 'notes', endpoint: own.endpoint, return_to: RETURN_TO },
          }),
        );
      const started = expectOk(await put(), 201) as PutConnectionAnswer;
      expect(redirectedTo(await callback(await approve(started.authorize ?? '')))).toBe(RETURN_TO);
      const fresh = expectOk(await authorizeAgain(owner), 200) as AuthorizeAnswer;
      expect((await read(owner)).state).toBe('linked');

      // A code the authorization server refuses: the browser goes back with the reason.
      const state = new URL(fresh.authorize).searchParams.get('state') ?? '';
      const forged = new URLSearchParams({ code: 'forged-code', state });
      const back = new URL(redirectedTo(await callback(`?${forged.toString()}`)));
      expect(back.searchParams.get('error')).toBe('upstream_authorization_failed');
      expect((await read(owner)).state).toBe('linked');

      // A read never fails on the server: one that is down reads as kept (§7).
      await own.close();
      expect(await read(owner)).toMatchObject({ state: 'linked', auth: { kind: 'oauth' } });
    } finally {
      await own.close().catch(() => undefined);
    }
  });

  it('refuses a callback for a connection that moved to another server meanwhile', async () => {
    const owner = await newOwner(harness);
    const linking = await link(owner);
    const started = expectOk(linking, 201) as PutConnectionAnswer;
    // A short-lived cookie only the callback sees, never script or a cross-site subrequest.
    expect(String([linking.headers['set-cookie']].flat()[0])).toMatch(
      /^connection_oauth_[0-9a-f]{16}=[\w-]{43}; Path=\/connections\/callback; Max-Age=600; HttpOnly; SameSite=Lax$/,
    );
    const query = await approve(started.authorize ?? '');
    expectOk(await link(owner, everything.endpoint), 200);
    expectProblem(await callback(query), 400, 'invalid_state', 'query.state');
    expect(await read(owner)).toMatchObject({ state: 'linked', endpoint: everything.endpoint });
    // Linked without OAuth, the connection's OAuth state is gone.
    expect(
      (await harness.stores.control.list('oauth_state', owner.tenant)).map((row) => row.id),
    ).toEqual([]);
  });

  it('refuses a callback opened in another browser, and leaves the authorization to the owner', async () => {
    const owner = await newOwner(harness);
    const linking = await link(owner);
    const started = expectOk(linking, 201) as PutConnectionAnswer;
    // A short-lived cookie only the callback sees, never script or a cross-site subrequest.
    expect(String([linking.headers['set-cookie']].flat()[0])).toMatch(
      /^connection_oauth_[0-9a-f]{16}=[\w-]{43}; Path=\/connections\/callback; Max-Age=600; HttpOnly; SameSite=Lax$/,
    );
    const query = await approve(started.authorize ?? '');

    // A forwarded link: a browser with no cookie, or with the cookie of another link.
    const other = await client.call({
      method: 'PUT',
      url: '/connections/other',
      headers: owner.headers,
      payload: { name: 'other', endpoint: peer.endpoint, return_to: RETURN_TO },
    });
    expect(other.status).toBe(201);
    const [pair = ''] = String([other.headers['set-cookie']].flat()[0]).split(';');
    const at = pair.indexOf('=');
    const elsewhere = new Map([[pair.slice(0, at), pair.slice(at + 1)]]);
    for (const browser of [new Map<string, string>(), elsewhere]) {
      const refused = await callback(query, browser);
      expectProblem(refused, 403, 'browser_mismatch', 'query.state');
    }
    // The declining path is bound as well: a stranger cannot spend the owner's handle.
    const state = new URL(started.authorize ?? '').searchParams.get('state') ?? '';
    const declined = new URLSearchParams({ error: 'access_denied', state });
    expectProblem(await callback(`?${declined.toString()}`, new Map()), 403, 'browser_mismatch');
    expect((await read(owner)).state).toBe('authorizing');

    // The owner's browser finishes the same link, and the binding cookie is dropped.
    const finished = await callback(query);
    expect(redirectedTo(finished)).toBe(RETURN_TO);
    expect(String([finished.headers['set-cookie']].flat()[0])).toMatch(/Max-Age=0/);
    expect((await read(owner)).state).toBe('linked');
  });

  it('answers 502 and changes nothing when registration is refused', async () => {
    const owner = await newOwner(harness);
    peer.authority.refuseRegistration(true);
    try {
      const refused = await link(owner);
      expectProblem(refused, 502, 'upstream_authorization_failed');
      // Which request failed, in our words; the server's own text stays in the log.
      expect((refused.body as { message: string }).message).toContain(
        'refused the client registration request (invalid_client_metadata)',
      );
      // Neither the answer nor the warn line repeats the server's words.
      expect(refused.text).not.toContain('registration is closed');
      expect(harness.logs.text()).not.toContain('registration is closed');
      expect(harness.logs.lines()).toContainEqual(
        expect.objectContaining({
          level: 40,
          msg: 'MCP server exchange failed',
          upstream: expect.objectContaining({ code: 'upstream_authorization_failed' }) as object,
        }),
      );
    } finally {
      peer.authority.refuseRegistration(false);
    }
    expectProblem(
      await client.call({ method: 'GET', url: '/connections/notes', headers: owner.headers }),
      404,
      'connection_not_found',
    );
  });
});
