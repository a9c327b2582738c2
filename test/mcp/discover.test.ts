import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import { UpstreamFailure } from '../../src/errors.ts';
import { discoverCatalog } from '../../src/mcp/discover.ts';
import { AuthorizationRequired } from '../../src/mcp/failures.ts';
import { startEverything } from './peers/everything.ts';
import type { EverythingServer } from './peers/everything.ts';
import { freePort, listenOnLoopback } from './peers/loopback.ts';
import type { Loopback } from './peers/loopback.ts';
import { sampleTools, startPagingServer } from './peers/paging.ts';
import type { PagingServer } from './peers/paging.ts';
import { loopbackEgress } from '../support/egress.ts';

const egress = loopbackEgress();

let everything: EverythingServer;
beforeAll(async () => {
  everything = await startEverything();
});
afterAll(async () => {
  await everything.close();
});

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});
async function paging(count: number, pageSize: number): Promise<PagingServer> {
  const server = await startPagingServer(sampleTools(count), pageSize);
  closers.push(() => server.close());
  return server;
}
async function loopback(handler: Parameters<typeof listenOnLoopback>[0]): Promise<Loopback> {
  const server = await listenOnLoopback(handler);
  closers.push(() => server.close());
  return server;
}

describe('discovering server-everything', () => {
  it('captures all thirteen tools, sorted, with the four kept fields and a digest of them', async () => {
    const clock = new ManualClock(Date.UTC(2026, 2, 1));
    const catalog = await discoverCatalog({
      egress,
      endpoint: everything.endpoint,
      timeoutMs: 10_000,
      clock,
    });
    const names = catalog.tools.map((tool) => tool.name);
    expect(names).toHaveLength(13);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum']));
    expect(names).toEqual([...names].sort());
    const echo = catalog.tools.find((tool) => tool.name === 'echo');
    expect(echo).toEqual({
      name: 'echo',
      description: 'Echoes back the input string',
      inputSchema: expect.objectContaining({ type: 'object', required: ['message'] }) as unknown,
    });
    expect(Object.keys(echo ?? {})).not.toContain('annotations');
    expect(catalog.captured).toBe(Date.UTC(2026, 2, 1));
    expect(catalog.serverInfo.name).toBe('mcp-servers/everything');
    expect(catalog.protocolVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    const expected = createHash('sha256')
      .update(canonicalize(catalog.tools) ?? '')
      .digest('hex');
    expect(catalog.digest).toBe(expected);
  });

  it('answers the same digest twice for an unchanged server, stamped by the clock each time', async () => {
    const clock = new ManualClock();
    const first = await discoverCatalog({
      egress,
      endpoint: everything.endpoint,
      timeoutMs: 10_000,
      clock,
    });
    clock.advance(60_000);
    const second = await discoverCatalog({
      egress,
      endpoint: everything.endpoint,
      timeoutMs: 10_000,
      clock,
    });
    expect(second.digest).toBe(first.digest);
    expect(second.tools).toEqual(first.tools);
    expect(second.captured - first.captured).toBe(60_000);
  });
});

describe('discovering a paging server', () => {
  it('follows nextCursor over three pages', async () => {
    const server = await paging(7, 3);
    const catalog = await discoverCatalog({
      egress,
      endpoint: server.endpoint,
      timeoutMs: 5000,
      clock: new ManualClock(),
    });
    expect(server.cursors).toEqual([null, 'p1', 'p2']);
    expect(catalog.tools.map((tool) => tool.name)).toEqual(sampleTools(7).map((tool) => tool.name));
    expect(catalog.serverInfo).toEqual({ name: 'paging-peer', version: '1.0.0' });
  });

  it('changes the digest when a tool changes, and only then', async () => {
    const server = await paging(7, 3);
    const discover = () =>
      discoverCatalog({
        egress,
        endpoint: server.endpoint,
        timeoutMs: 5000,
        clock: new ManualClock(),
      });
    const before = await discover();

    server.setTools(sampleTools(7).reverse());
    expect((await discover()).digest).toBe(before.digest);

    server.setTools(
      sampleTools(7, (i) => (i === 5 ? 'Now deletes everything' : `Tool number ${i}`)),
    );
    const described = await discover();
    expect(described.digest).not.toBe(before.digest);

    server.setTools(sampleTools(6));
    const fewer = await discover();
    expect(fewer.tools).toHaveLength(6);
    expect(new Set([before.digest, described.digest, fewer.digest]).size).toBe(3);
  });

  it('refuses a server that repeats a cursor, as unreadable', async () => {
    const server = await paging(7, 3);
    server.setMode('loop');
    const failure = discoverCatalog({
      egress,
      endpoint: server.endpoint,
      timeoutMs: 5000,
      clock: new ManualClock(),
    });
    await expect(failure).rejects.toBeInstanceOf(UpstreamFailure);
    await expect(failure).rejects.toMatchObject({
      code: 'upstream_unreadable',
      status: 502,
      message: expect.stringContaining('repeated a cursor') as unknown,
    });
    expect(server.cursors).toEqual([null, 'p0']);
  });

  it('gives up on a server that never stops paging after the page limit', async () => {
    const server = await paging(7, 3);
    server.setMode('endless');
    const failure = discoverCatalog({
      egress,
      endpoint: server.endpoint,
      timeoutMs: 5000,
      clock: new ManualClock(),
      maxPages: 5,
    });
    await expect(failure).rejects.toMatchObject({ code: 'upstream_unreadable' });
    expect(server.cursors).toHaveLength(5);
  });

  it('refuses a catalog that lists a tool twice', async () => {
    const server = await paging(3, 2);
    server.setTools([...sampleTools(3), ...sampleTools(1)]);
    await expect(
      discoverCatalog({
        egress,
        endpoint: server.endpoint,
        timeoutMs: 5000,
        clock: new ManualClock(),
      }),
    ).rejects.toMatchObject({
      code: 'upstream_unreadable',
      message: expect.stringContaining('"tool-00" is listed twice') as unknown,
    });
  });
});

describe('a server that cannot be read', () => {
  it('is unreachable when nothing listens, naming the endpoint', async () => {
    const endpoint = `http://127.0.0.1:${await freePort()}/mcp`;
    const failure = discoverCatalog({
      egress,
      endpoint,
      timeoutMs: 5000,
      clock: new ManualClock(),
    });
    await expect(failure).rejects.toBeInstanceOf(UpstreamFailure);
    await expect(failure).rejects.toMatchObject({
      code: 'upstream_unreachable',
      status: 502,
      message: expect.stringContaining(endpoint) as unknown,
    });
  });

  it('times out when the server accepts and never answers', async () => {
    const silent = await loopback(() => undefined);
    const started = Date.now();
    await expect(
      discoverCatalog({
        egress,
        endpoint: `${silent.origin}/mcp`,
        timeoutMs: 300,
        clock: new ManualClock(),
      }),
    ).rejects.toMatchObject({ code: 'upstream_timeout' });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('is unreadable when the endpoint does not speak MCP', async () => {
    const web = await loopback((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>not here</h1>');
    });
    await expect(
      discoverCatalog({
        egress,
        endpoint: `${web.origin}/mcp`,
        timeoutMs: 5000,
        clock: new ManualClock(),
      }),
    ).rejects.toMatchObject({ code: 'upstream_unreadable' });
  });

  it('reads as needing authorization when the server answers 401 to a bare request', async () => {
    const guarded = await loopback((_req, res) => {
      res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
    });
    const failure = discoverCatalog({
      egress,
      endpoint: `${guarded.origin}/mcp`,
      timeoutMs: 5000,
      clock: new ManualClock(),
    });
    await expect(failure).rejects.toBeInstanceOf(AuthorizationRequired);
    await expect(failure).rejects.toMatchObject({
      code: 'upstream_authorization_required',
      status: 502,
    });
  });

  it("passes the caller's abort through instead of blaming the server", async () => {
    const silent = await loopback(() => undefined);
    const controller = new AbortController();
    const reason = new Error('shutting down');
    setTimeout(() => {
      controller.abort(reason);
    }, 100);
    await expect(
      discoverCatalog({
        egress,
        endpoint: `${silent.origin}/mcp`,
        timeoutMs: 5000,
        clock: new ManualClock(),
        signal: controller.signal,
      }),
    ).rejects.toBe(reason);
  });
});
