/**
 * The egress guard over HTTP: `PUT /connections` reaches a server only through the egress
 * guard. Loopback, unspecified and loopback-by-name endpoints, and a loopback endpoint
 * that redirects to another port, are 400 `endpoint_refused` naming `body.endpoint`
 * without `EGRESS_ALLOW`, and link with it. An upstream's words never reach an answer;
 * the log keeps them at warn level.
 */
import type { IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../../../src/schemas/connections.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner } from '../../support/console.ts';
import { LOOPBACK_PEERS } from '../../support/egress.ts';
import { startEverything, type EverythingServer } from '../../mcp/peers/everything.ts';
import { listenOnLoopback, type Loopback } from '../../mcp/peers/loopback.ts';
import { ConsoleClient, expectOk, expectProblem } from '../console/console-client.ts';

/** A text only the peer says: it must never appear in an answer. */
const PEER_TEXT = 'peer-said-internal-detail-7f3a';

let strict: TestApp;
let allowed: TestApp;
let everything: EverythingServer;
let redirector: Loopback;
let broken: Loopback;
const redirected: IncomingMessage[] = [];

beforeAll(async () => {
  everything = await startEverything();
  const port = new URL(everything.endpoint).port;
  [strict, allowed, redirector, broken] = await Promise.all([
    startTestApp({ egressAllow: '' }),
    // 0.0.0.0 reaches this machine too: allowing it is the operator's explicit choice.
    startTestApp({ egressAllow: `${LOOPBACK_PEERS},0.0.0.0/32` }),
    listenOnLoopback((req, res) => {
      redirected.push(req);
      res.writeHead(307, { location: `http://127.0.0.1:${port}/mcp` }).end();
    }),
    listenOnLoopback((_req, res) => {
      res
        .writeHead(500, { 'content-type': 'text/plain' })
        .end(`${PEER_TEXT} Authorization: Bearer leaked-token-123`);
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([
    strict.close(),
    allowed.close(),
    everything.close(),
    redirector.close(),
    broken.close(),
  ]);
});

/** The endpoints under test, by what they are. */
const KINDS = [
  'an IPv4 loopback address',
  'the IPv6 loopback address',
  'the unspecified address',
  'localhost by name',
  'a loopback URL that redirects to another port',
] as const;

function endpointOf(kind: (typeof KINDS)[number]): string {
  const port = new URL(everything.endpoint).port;
  switch (kind) {
    case 'an IPv4 loopback address':
      return `http://127.0.0.1:${port}/mcp`;
    case 'the IPv6 loopback address':
      return `http://[::1]:${port}/mcp`;
    case 'the unspecified address':
      return `http://0.0.0.0:${port}/mcp`;
    case 'localhost by name':
      return `http://localhost:${port}/mcp`;
    case 'a loopback URL that redirects to another port':
      return `${redirector.origin}/mcp`;
  }
}

async function put(harness: TestApp, endpoint: string) {
  const client = await ConsoleClient.of(harness);
  const owner = await newOwner(harness);
  const answer = await client.call({
    method: 'PUT',
    url: '/connections/peer',
    headers: owner.headers,
    payload: { name: 'peer', endpoint, timeout: '5s' },
  });
  const listed = await client.call({ method: 'GET', url: '/connections', headers: owner.headers });
  return { answer, listed: expectOk(listed, 200) as Connection[] };
}

describe('PUT /connections without EGRESS_ALLOW', () => {
  it.each(KINDS)('refuses %s as 400 naming body.endpoint', async (kind) => {
    const endpoint = endpointOf(kind);
    const before = redirected.length;
    const { answer, listed } = await put(strict, endpoint);
    expectProblem(answer, 400, 'endpoint_refused', 'body.endpoint');
    expect((answer.body as { message: string }).message).toMatch(/EGRESS_ALLOW/);
    expect(listed).toEqual([]);
    // Refused before connecting: the redirecting peer never saw a request.
    expect(redirected.length).toBe(before);
  });
});

describe('PUT /connections with EGRESS_ALLOW naming the addresses', () => {
  it.each(KINDS)('links %s', async (kind) => {
    const endpoint = endpointOf(kind);
    const { answer, listed } = await put(allowed, endpoint);
    const body = expectOk(answer, 201) as { connection: Connection };
    expect(body.connection).toMatchObject({ state: 'linked', endpoint });
    expect(body.connection.catalog?.tools.map((tool) => tool.name)).toContain('echo');
    expect(listed.map((connection) => connection.name)).toEqual(['peer']);
  });

  it('followed the redirect to the other port of the same host', () => {
    expect(redirected.length).toBeGreaterThan(0);
  });
});

describe("an upstream's answer", () => {
  it('is never copied into ours: the problem names the step and status, the log keeps the rest', async () => {
    const { answer, listed } = await put(allowed, `${broken.origin}/mcp`);
    expectProblem(answer, 502, 'upstream_unreadable');
    expect((answer.body as { message: string }).message).toBe(
      `MCP server at ${broken.origin}/mcp could not be read (the MCP POST request answered HTTP 500)`,
    );
    expect(answer.text).not.toContain(PEER_TEXT);
    expect(listed).toEqual([]);

    // Logged at warn with our own words, without the server's body.
    const warned = allowed.logs
      .lines()
      .filter((line) => line.level === 40 && line.msg === 'MCP server exchange failed');
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({
      upstream: {
        endpoint: `${broken.origin}/mcp`,
        status: 500,
        step: 'MCP POST request',
        code: 'upstream_unreadable',
        errors: expect.arrayContaining(['StreamableHTTPError']) as string[],
      },
    });
    expect(allowed.logs.text()).not.toContain(PEER_TEXT);
    expect(allowed.logs.text()).not.toContain('leaked-token-123');
  });
});
