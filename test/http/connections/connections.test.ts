import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection, PutConnectionAnswer } from '../../../src/schemas/connections.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner, type ConsoleUser } from '../../support/console.ts';
import { startEverything, type EverythingServer } from '../../mcp/peers/everything.ts';
import { startOAuthServer, type OAuthServer } from '../../mcp/peers/oauth-server.ts';
import { ConsoleClient, expectOk, expectProblem, type Caller } from '../console/console-client.ts';

let harness: TestApp;
let client: ConsoleClient;
let everything: EverythingServer;
let oauthPeer: OAuthServer;
beforeAll(async () => {
  [harness, everything, oauthPeer] = await Promise.all([
    startTestApp(),
    startEverything(),
    startOAuthServer(),
  ]);
  client = await ConsoleClient.of(harness);
});
afterAll(async () => {
  await Promise.all([harness.close(), everything.close(), oauthPeer.close()]);
});

const put = (caller: Caller, id: string, payload: unknown) =>
  client.call({ method: 'PUT', url: `/connections/${id}`, headers: caller.headers, payload });
const get = (caller: Caller, id: string) =>
  client.call({ method: 'GET', url: `/connections/${id}`, headers: caller.headers });

async function storeSecret(owner: ConsoleUser, name: string, value: string) {
  const answer = await client.call({
    method: 'PUT',
    url: `/secrets/${name}`,
    headers: owner.headers,
    payload: { value },
  });
  expectOk(answer, 201);
}

describe('linking server-everything', () => {
  it('captures its catalog live and reads it back', async () => {
    const owner = await newOwner(harness);
    const created = expectOk(
      await put(owner, 'everything', { name: 'everything', endpoint: everything.endpoint }),
      201,
    ) as PutConnectionAnswer;
    expect(created.outcome).toBe('created');
    expect(created.authorize).toBeUndefined();
    expect(created.connection).toMatchObject({
      name: 'everything',
      endpoint: everything.endpoint,
      state: 'linked',
      auth: { kind: 'none' },
      result_limit: null,
      timeout: null,
    });

    const read = expectOk(await get(owner, 'everything'), 200) as Connection;
    const names = read.catalog?.tools.map((tool) => tool.name) ?? [];
    expect(names).toHaveLength(13);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    expect(read.catalog?.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(read.catalog?.tools.find((tool) => tool.name === 'echo')?.inputSchema).toMatchObject({
      type: 'object',
      required: ['message'],
    });
    expect(read).toEqual(created.connection);

    const listed = expectOk(
      await client.call({ method: 'GET', url: '/connections', headers: owner.headers }),
      200,
    ) as Connection[];
    expect(listed).toEqual([read]);

    // Row 46: the same config and catalog is unchanged (nothing written); any change replaces.
    const version = (await harness.stores.control.get('connection', owner.tenant, 'everything'))
      ?.version;
    const again = expectOk(
      await put(owner, 'everything', { name: 'everything', endpoint: everything.endpoint }),
      200,
    ) as PutConnectionAnswer;
    expect(again.outcome).toBe('unchanged');
    expect(again.connection.catalog?.captured).toBe(read.catalog?.captured);
    expect(
      (await harness.stores.control.get('connection', owner.tenant, 'everything'))?.version,
    ).toBe(version);
    const slower = expectOk(
      await put(owner, 'everything', {
        name: 'everything',
        endpoint: everything.endpoint,
        timeout: '30s',
        result_limit: 4096,
      }),
      200,
    ) as PutConnectionAnswer;
    expect(slower.outcome).toBe('replaced');
    expect(slower.connection).toMatchObject({ timeout: '30s', result_limit: 4096 });
  });
});

describe('a credential the tenant holds', () => {
  it('is sent as a bearer and never shown', async () => {
    const owner = await newOwner(harness);
    const token = oauthPeer.authority.staticToken;
    await storeSecret(owner, 'notes-token', token);
    const answer = expectOk(
      await put(owner, 'notes', {
        name: 'notes',
        endpoint: oauthPeer.endpoint,
        credential: 'notes-token',
      }),
      201,
    ) as PutConnectionAnswer;
    expect(answer.connection.auth).toEqual({ kind: 'bearer', credential: 'notes-token' });
    expect(answer.connection.catalog?.tools.map((tool) => tool.name)).toEqual([
      'add',
      'echo',
      'whoami',
    ]);
    expect(oauthPeer.authority.counts.registrations).toBe(0);
    // 2.18: the secret is now in use by the connection.
    const refused = await client.call({
      method: 'DELETE',
      url: '/secrets/notes-token',
      headers: owner.headers,
    });
    expectProblem(refused, 409, 'secret_in_use');
    expect(refused.body).toMatchObject({ connections: ['notes'], inferences: [] });

    // A value the server refuses is an upstream failure, and nothing is linked.
    await storeSecret(owner, 'wrong', `not-${randomUUID()}`);
    expectProblem(
      await put(owner, 'other', {
        name: 'other',
        endpoint: oauthPeer.endpoint,
        credential: 'wrong',
      }),
      502,
      'upstream_authorization_required',
    );
    expectProblem(await get(owner, 'other'), 404, 'connection_not_found');

    for (const text of [...client.texts, harness.logs.text()]) expect(text).not.toContain(token);
  });
});
