/**
 * The catalog check at session start (3.1 row 1, 3.3, §7 POST /sessions; decisions row
 * 47) against real MCP servers on loopback: an unchanged catalog opens, a changed one is
 * 409 `catalog_changed` naming the connection, a server that cannot be read is 502, and a
 * conflict outranks an upstream failure. Connections are linked and installs consented
 * through the console API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { flowOf, type Owner, type PublicFlow, type TestInstall } from '../../support/flow.ts';
import { sampleTools, startPagingServer, type PagingServer } from '../../mcp/peers/paging.ts';
import { startOAuthServer, type OAuthServer } from '../../mcp/peers/oauth-server.ts';
import { SessionClient } from './session-client.ts';

let harness: TestApp;
let flow: PublicFlow;
let client: SessionClient;
let docs: PagingServer;
let stopped: PagingServer;
let notes: OAuthServer;

beforeAll(async () => {
  harness = await startTestApp();
  flow = flowOf(harness);
  client = await SessionClient.listen(harness);
  docs = await startPagingServer(sampleTools(3), 2);
  stopped = await startPagingServer(sampleTools(1), 2);
  notes = await startOAuthServer();
});
afterAll(async () => {
  await Promise.all([docs.close(), notes.close()]);
  await harness.close();
});

const open = (headers: Record<string, string>) =>
  ({ method: 'POST', path: '/sessions?principal=ada', headers }) as const;

/** An install of `owner` consenting to extra tools `connection__tool`. */
const installWith = (owner: Owner, ...tools: (readonly [string, string])[]): Promise<TestInstall> =>
  flow.install({
    owner,
    config: { extra_tools: tools.map(([connection, tool]) => ({ connection, tool })) },
  });

/**
 * Links `name` to the OAuth peer as its owner would (3.3): the PUT answers an authorize
 * URL and a browser cookie, the authorization server approves, the callback links it.
 */
async function linkOAuth(owner: Owner, name: string): Promise<void> {
  const put = await flow.send('PUT', `/connections/${name}`, owner.token, {
    name,
    endpoint: notes.endpoint,
  });
  expect(put.status, JSON.stringify(put.body)).toBe(201);
  const { authorize } = put.body as { authorize: string };
  const approved = await fetch(authorize, { redirect: 'manual' });
  expect(approved.status).toBe(302);
  const back = new URL(approved.headers.get('location') ?? '');
  const cookie = put.cookies.map((line) => line.split(';')[0]).join('; ');
  const callback = await flow.send('GET', `${back.pathname}${back.search}`, null, undefined, {
    cookie,
  });
  expect(callback.status, JSON.stringify(callback.body)).toBe(303);
  const read = await flow.expect(200, 'GET', `/connections/${name}`, owner.token);
  expect(read).toMatchObject({ state: 'linked' });
}

describe('session start checks connected catalogs', () => {
  it('opens while the catalog is unchanged, listing the extra tool', async () => {
    const owner = await flow.owner();
    await flow.link(owner, 'docs', docs.endpoint);
    const install = await installWith(owner, ['docs', 'tool-01']);
    const opened = await client.open(install);
    const [first] = await harness.stores.log.read(opened.session, { from: 1 });
    expect(JSON.parse(first?.body ?? '{}')).toMatchObject({
      tools: [
        { name: 'lookup', source: 'vendor' },
        { name: 'docs__tool-01', source: 'connection:docs' },
      ],
    });
  });

  it('answers 409 catalog_changed once the server changed its tools, and opens again after', async () => {
    const owner = await flow.owner();
    await flow.link(owner, 'docs', docs.endpoint);
    const install = await installWith(owner, ['docs', 'tool-00']);
    docs.setTools(sampleTools(3, (i) => `Changed tool ${i}`));
    try {
      const problem = await client.refused(open(install.headers), 409, 'catalog_changed');
      expect(problem.connections).toEqual(['docs']);
    } finally {
      docs.setTools(sampleTools(3));
    }
    await client.open(install);
  });

  it('answers 502 when a connected server cannot be read; a change still wins (409)', async () => {
    const owner = await flow.owner();
    await flow.link(owner, 'docs', docs.endpoint);
    await flow.link(owner, 'down', stopped.endpoint);
    const unreadable = await installWith(owner, ['down', 'tool-00']);
    const both = await installWith(owner, ['down', 'tool-00'], ['docs', 'tool-00']);
    await stopped.close();
    const problem = await client.refused(open(unreadable.headers), 502, 'upstream_unreachable');
    expect(String(problem.message)).toContain('127.0.0.1');

    docs.setTools(sampleTools(2));
    try {
      const changed = await client.refused(open(both.headers), 409, 'catalog_changed');
      expect(changed.connections).toEqual(['docs']);
    } finally {
      docs.setTools(sampleTools(3));
    }
  });

  it('answers 502 for a connection needing authorization again; a linked one in use stays', async () => {
    const owner = await flow.owner();
    await linkOAuth(owner, 'notes');
    const install = await installWith(owner, ['notes', 'echo']);
    await client.open(install);
    // The server revokes its grant and refuses a refresh: the connection needs the owner
    // to authorize it again (3.3 row 5), and sessions cannot open meanwhile.
    notes.authority.revokeAll();
    notes.authority.failRefresh(true);
    try {
      await client.refused(open(install.headers), 502, 'upstream_authorization_required');
      const read = await flow.expect(200, 'GET', '/connections/notes', owner.token);
      expect(read).toMatchObject({ state: 'authorizing' });
      await client.refused(open(install.headers), 502, 'connection_authorizing');
    } finally {
      notes.authority.failRefresh(false);
    }
    // A connection an install uses cannot be deleted out from under it (row 78).
    const refused = await flow.send('DELETE', '/connections/notes', owner.token);
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
  });

  it('sends a bearer connection its secret, and answers 502 once the server refuses it', async () => {
    const owner = await flow.owner();
    await flow.expect(201, 'PUT', '/secrets/docs-key', owner.token, { value: 'sk-test' });
    const server = await startPagingServer(sampleTools(1), 2);
    server.requireBearer('sk-test');
    try {
      await flow.link(owner, 'docs', server.endpoint, { credential: 'docs-key' });
      const install = await installWith(owner, ['docs', 'tool-00']);
      await client.open(install);
      await flow.expect(200, 'PUT', '/secrets/docs-key', owner.token, { value: 'sk-wrong' });
      await client.refused(open(install.headers), 502, 'upstream_authorization_required');
      await flow.expect(200, 'PUT', '/secrets/docs-key', owner.token, { value: 'sk-test' });
      await client.open(install);
    } finally {
      await server.close();
    }
  });
});
