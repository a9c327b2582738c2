import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock, systemEntropy } from '../../src/clock.ts';
import { InvalidRequest, UpstreamFailure } from '../../src/errors.ts';
import { callTool } from '../../src/mcp/call.ts';
import { AuthorizationRequired } from '../../src/mcp/failures.ts';
import {
  AUTHORIZATION_TTL_MS,
  beginLink,
  connectionProvider,
  finishLink,
  freshAuthorizeUrl,
} from '../../src/mcp/oauth.ts';
import type { LinkContext, LinkOutcome, LinkRequest } from '../../src/mcp/oauth.ts';
import { Egress } from '../../src/net/egress.ts';
import { parseAllowList } from '../../src/net/addresses.ts';
import type { OAuthStateStore } from '../../src/mcp/oauth-state.ts';
import { listenOnLoopback } from './peers/loopback.ts';
import { startOAuthServer } from './peers/oauth-server.ts';
import type { OAuthServer } from './peers/oauth-server.ts';
import { sampleTools, startPagingServer } from './peers/paging.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { loopbackEgress } from '../support/egress.ts';

const BASE_URL = 'https://sessions.example.test';
const egress = loopbackEgress();

// The OAuth state lives where the service keeps it: sealed in the control store of a
// running service, whose clock the tests move.
const clock = new ManualClock();
let harness: TestApp;
beforeAll(async () => {
  harness = await startTestApp({ clock });
});
afterAll(async () => {
  await harness.close();
});

let peer: OAuthServer;
let store: OAuthStateStore;
let context: LinkContext;
let link: LinkRequest;
beforeEach(async () => {
  peer = await startOAuthServer();
  store = harness.services.oauth.forEndpoint(peer.endpoint);
  context = { store, baseUrl: BASE_URL, clock, entropy: systemEntropy, timeoutMs: 5000, egress };
  link = {
    tenant: `t-${randomUUID()}`,
    connection: 'notes',
    endpoint: peer.endpoint,
    returnTo: `${BASE_URL}/console/connections/notes`,
  };
});
afterEach(async () => {
  await peer.close();
});

/** The authorize URL of an outcome that must be authorizing. */
function authorizeUrl(outcome: LinkOutcome): URL {
  if (outcome.status !== 'authorizing')
    throw new Error(`expected authorizing, got ${outcome.status}`);
  return outcome.authorize;
}

/** Plays the owner's browser: opens the URL and reads the redirect back to our callback. */
async function approve(authorize: URL): Promise<{ code: string; state: string }> {
  const response = await fetch(authorize, { redirect: 'manual' });
  expect(response.status).toBe(302);
  const callback = new URL(response.headers.get('location') ?? '');
  expect(`${callback.origin}${callback.pathname}`).toBe(`${BASE_URL}/connections/callback`);
  return {
    code: callback.searchParams.get('code') ?? '',
    state: callback.searchParams.get('state') ?? '',
  };
}

const whoami = (provider = connectionProvider(context, link)) =>
  callTool({
    egress,
    endpoint: peer.endpoint,
    authProvider: provider,
    name: 'whoami',
    args: {},
    timeoutMs: 5000,
  });

describe('linking an OAuth-protected server', () => {
  it('authorizes, links, calls, refreshes, and asks again once the grant is gone', async () => {
    // PUT without a credential: the SDK registers a client and starts an authorization.
    const authorize = authorizeUrl(await beginLink(context, link));
    const client = await store.loadClient(link);
    expect(client?.client_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(peer.authority.counts.registrations).toBe(1);
    expect(`${authorize.origin}${authorize.pathname}`).toBe(`${peer.issuer}/authorize`);
    expect(Object.fromEntries(authorize.searchParams)).toMatchObject({
      response_type: 'code',
      client_id: client?.client_id,
      code_challenge_method: 'S256',
      redirect_uri: `${BASE_URL}/connections/callback`,
      resource: peer.endpoint,
    });
    expect(authorize.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(authorize.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await store.loadTokens(link)).toBeUndefined();

    // The callback: exchange the code (PKCE) and discover.
    const callback = await approve(authorize);
    expect(callback.state).toBe(authorize.searchParams.get('state'));
    const finished = await finishLink(context, callback);
    expect(finished).toMatchObject({
      status: 'linked',
      tenant: link.tenant,
      connection: 'notes',
      returnTo: link.returnTo,
    });
    if (finished.status !== 'linked') throw new Error('not linked');
    expect(finished.catalog.tools.map((tool) => tool.name)).toEqual(['add', 'echo', 'whoami']);
    const tokens = await store.loadTokens(link);
    expect(tokens?.access_token).toMatch(/^at_/);
    expect(tokens?.refresh_token).toMatch(/^rt_/);
    expect(tokens?.issuer).toBe(`${peer.issuer}/`);

    // The state is single use.
    await expect(finishLink(context, callback)).rejects.toMatchObject({
      code: 'invalid_state',
      status: 400,
    });

    // The service calls a tool with the stored tokens.
    const called = await whoami();
    expect(called).toEqual({ content: [{ type: 'text', text: client?.client_id }] });

    // A new PUT: the earlier authorization still opens, so it links without asking.
    const relinked = await beginLink(context, link);
    expect(relinked.status).toBe('linked');
    expect(peer.authority.counts).toMatchObject({ registrations: 1, authorizations: 1 });

    // An expired access token is refreshed transparently.
    peer.authority.expireAccessTokens();
    expect((await whoami()).isError).toBeUndefined();
    expect(peer.authority.counts.refreshes).toBe(1);
    expect((await store.loadTokens(link))?.access_token).not.toBe(tokens?.access_token);

    // Revoked, and the refresh refused: it reads as needing authorization again.
    peer.authority.revokeAll();
    peer.authority.failRefresh(true);
    const provider = connectionProvider(context, link);
    await expect(whoami(provider)).rejects.toBeInstanceOf(AuthorizationRequired);
    expect(provider.authorizeUrl?.searchParams.get('client_id')).toBe(client?.client_id);
    expect(await store.loadTokens(link)).toBeUndefined();
    const again = authorizeUrl(await beginLink(context, link));
    expect(again.searchParams.get('state')).not.toBe(authorize.searchParams.get('state'));
    expect(again.searchParams.get('client_id')).toBe(client?.client_id);
    expect(peer.authority.counts.registrations).toBe(1);

    // Finishing the fresh authorization links it again.
    peer.authority.failRefresh(false);
    const relink = await finishLink(context, await approve(again));
    expect(relink.status).toBe('linked');
    expect((await whoami()).content).toEqual([{ type: 'text', text: client?.client_id }]);
  });

  it('mints a fresh authorize URL while stored tokens still work, keeping them until replaced', async () => {
    await finishLink(context, await approve(authorizeUrl(await beginLink(context, link))));
    const kept = await store.loadTokens(link);
    const fresh = authorizeUrl(await freshAuthorizeUrl(context, link));
    expect(fresh.searchParams.get('state')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await store.loadTokens(link)).toEqual(kept);
    await finishLink(context, await approve(fresh));
    expect((await store.loadTokens(link))?.access_token).not.toBe(kept?.access_token);
  });

  it('refuses a callback whose authorization expired', async () => {
    const callback = await approve(authorizeUrl(await beginLink(context, link)));
    clock.advance(AUTHORIZATION_TTL_MS);
    const refused = finishLink(context, callback);
    await expect(refused).rejects.toBeInstanceOf(InvalidRequest);
    await expect(refused).rejects.toMatchObject({ code: 'invalid_state', field: 'query.state' });
    expect(peer.authority.counts.codeExchanges).toBe(0);
  });

  it('reads a forged code as an authorization failure that leaves the stored link alone', async () => {
    await finishLink(context, await approve(authorizeUrl(await beginLink(context, link))));
    const kept = await store.loadTokens(link);
    const callback = await approve(authorizeUrl(await freshAuthorizeUrl(context, link)));
    const failure = finishLink(context, { state: callback.state, code: 'code_forged' });
    await expect(failure).rejects.toBeInstanceOf(UpstreamFailure);
    await expect(failure).rejects.toMatchObject({
      code: 'upstream_authorization_failed',
      message: expect.stringContaining(peer.endpoint) as unknown,
    });
    expect(await store.loadTokens(link)).toEqual(kept);
    expect((await beginLink(context, link)).status).toBe('linked');
  });

  it('fails as upstream when registration is refused, storing nothing', async () => {
    peer.authority.refuseRegistration(true);
    const failure = beginLink(context, link);
    await expect(failure).rejects.toBeInstanceOf(UpstreamFailure);
    await expect(failure).rejects.toMatchObject({
      code: 'upstream_authorization_failed',
      status: 502,
    });
    expect(await store.loadClient(link)).toBeUndefined();
  });

  it('links a server that demands no authorization at once', async () => {
    const open = await startPagingServer(sampleTools(4), 10);
    try {
      const outcome = await beginLink(context, { ...link, endpoint: open.endpoint });
      expect(outcome.status).toBe('linked');
      expect(await store.loadClient(link)).toBeUndefined();
    } finally {
      await open.close();
    }
  });
});

describe('a static bearer credential', () => {
  it('opens the server without OAuth, and a wrong one reads as needing authorization', async () => {
    const called = await callTool({
      egress,
      endpoint: peer.endpoint,
      bearer: peer.authority.staticToken,
      name: 'whoami',
      args: {},
      timeoutMs: 5000,
    });
    expect(called.content).toEqual([{ type: 'text', text: 'static' }]);
    await expect(
      callTool({
        egress,
        endpoint: peer.endpoint,
        bearer: 'not-the-token',
        name: 'whoami',
        args: {},
        timeoutMs: 5000,
      }),
    ).rejects.toMatchObject({ code: 'upstream_authorization_required' });
    expect(peer.authority.counts.registrations).toBe(0);
  });
});

describe('URLs a server points at', () => {
  it('go through the guard: metadata on a refused address stops the flow before any request', async () => {
    // 127.0.0.2 is loopback (so a wrong guard could reach nothing but this machine) and
    // outside this allow-list.
    const seen: string[] = [];
    const guarded = await listenOnLoopback((req, res) => {
      seen.push(req.url ?? '');
      res
        .writeHead(401, {
          'www-authenticate':
            'Bearer resource_metadata="http://127.0.0.2:9/.well-known/oauth-protected-resource"',
        })
        .end();
    });
    try {
      const refusing = {
        ...context,
        egress: new Egress({ allow: parseAllowList('127.0.0.1/32') }),
      };
      const failure = beginLink(refusing, { ...link, endpoint: `${guarded.origin}/mcp` });
      await expect(failure).rejects.toMatchObject({
        code: 'upstream_refused',
        message: `MCP server at ${guarded.origin}/mcp: a URL it pointed to is a loopback address, which the service does not connect to unless EGRESS_ALLOW names it`,
      });
      expect(seen).toEqual(['/mcp']);
      expect(await store.loadClient(link)).toBeUndefined();
    } finally {
      await guarded.close();
    }
  });
});
