/**
 * The egress guard over real sockets, on loopback only: addresses are
 * refused before anything connects, host names are decided on what their lookup answers
 * at connect time, redirects stay on their host, and an exchange's answers are bounded.
 * Every address these tests connect to (or would, were the guard wrong) is loopback.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Egress } from '../../src/net/egress.ts';
import { parseAllowList } from '../../src/net/addresses.ts';
import { nextHop } from '../../src/net/redirects.ts';
import { EgressRefused, ResponseTooLarge } from '../../src/net/refusal.ts';
import { listenOnLoopback, type Loopback } from '../mcp/peers/loopback.ts';

/** A loopback server that counts what reaches it and answers `reply`. */
interface Counting extends Loopback {
  readonly requests: IncomingMessage[];
  port: number;
}

async function counting(reply: (req: IncomingMessage, res: ServerResponse) => void) {
  const requests: IncomingMessage[] = [];
  const server = await listenOnLoopback((req, res) => {
    requests.push(req);
    reply(req, res);
  });
  return { ...server, requests, port: Number(new URL(server.origin).port) } satisfies Counting;
}

let target: Counting;
let redirecting: Counting;
let large: Counting;
beforeAll(async () => {
  target = await counting((_req, res) => res.end('ok'));
  redirecting = await counting((req, res) => {
    const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to') ?? '/';
    res.writeHead(307, { location: to }).end();
  });
  large = await counting((req, res) => {
    const body = 'x'.repeat(10_000);
    if (req.url === '/chunked') res.write(body);
    else res.writeHead(200, { 'content-length': String(body.length) }).write(body);
    res.end();
  });
});
afterAll(async () => {
  await Promise.all([target.close(), redirecting.close(), large.close()]);
});

const LOOPBACK = parseAllowList('127.0.0.0/8,::1/128');

/** Fetches `url` through a fresh exchange of `egress` and closes it. */
async function through(egress: Egress, url: string, init?: RequestInit) {
  const outbound = egress.open();
  try {
    const response = await outbound.fetch(url, init);
    return { status: response.status, text: await response.text() };
  } finally {
    await outbound.close();
  }
}

describe('addresses', () => {
  it('refuses loopback literals and names before connecting, without EGRESS_ALLOW', async () => {
    const strict = new Egress();
    const before = target.requests.length;
    for (const host of ['127.0.0.1', '[::1]', '0.0.0.0', 'localhost', '[::ffff:127.0.0.1]']) {
      const failure = through(strict, `http://${host}:${target.port}/`);
      await expect(failure).rejects.toBeInstanceOf(EgressRefused);
      await expect(failure).rejects.toMatchObject({ reason: 'address' });
    }
    expect(target.requests.length).toBe(before);
  });

  it('connects to the addresses EGRESS_ALLOW names', async () => {
    const allowed = new Egress({ allow: LOOPBACK });
    expect(await through(allowed, `http://127.0.0.1:${target.port}/`)).toEqual({
      status: 200,
      text: 'ok',
    });
    expect(await through(allowed, `http://localhost:${target.port}/`)).toMatchObject({
      status: 200,
    });
  });

  it('ends the exchange at the first refusal, even if the caller swallows it', async () => {
    const outbound = new Egress().open();
    try {
      await outbound.fetch(`http://127.0.0.1:${target.port}/`).catch(() => undefined);
      expect(outbound.signal.aborted).toBe(true);
      expect(outbound.failure()).toMatchObject({ reason: 'address', addressClass: 'loopback' });
    } finally {
      await outbound.close();
    }
  });

  it('refuses what is not http or https', async () => {
    await expect(
      through(new Egress({ allow: LOOPBACK }), `ftp://127.0.0.1:${target.port}/`),
    ).rejects.toMatchObject({ reason: 'scheme' });
  });

  it('decides on each lookup at connect time, so a name that rebinds is refused', async () => {
    // The name answers an allowed address, then one outside the allow-list (both loopback,
    // so a wrong guard could only ever reach this machine).
    const answers = ['127.0.0.1', '127.0.0.2'];
    const lookups: string[] = [];
    const lookup: LookupFunction = (hostname, _options, callback) => {
      lookups.push(hostname);
      callback(null, [{ address: answers.shift() ?? '127.0.0.2', family: 4 }]);
    };
    const egress = new Egress({ allow: parseAllowList('127.0.0.1/32'), lookup });
    const url = `http://rebinding.test:${target.port}/`;
    expect(await through(egress, url)).toMatchObject({ status: 200 });
    const before = target.requests.length;
    const failure = through(egress, url);
    await expect(failure).rejects.toMatchObject({
      reason: 'address',
      host: 'rebinding.test',
      addressClass: 'loopback',
    });
    expect(lookups).toEqual(['rebinding.test', 'rebinding.test']);
    expect(target.requests.length).toBe(before);
  });

  it('connects only to the allowed addresses of a name that answers several', async () => {
    const lookup: LookupFunction = (_hostname, _options, callback) => {
      callback(null, [
        { address: '127.0.0.2', family: 4 },
        { address: '127.0.0.1', family: 4 },
      ]);
    };
    const egress = new Egress({ allow: parseAllowList('127.0.0.1/32'), lookup });
    expect(await through(egress, `http://both.test:${target.port}/`)).toMatchObject({
      status: 200,
    });
  });
});

describe('redirects', () => {
  const allowed = new Egress({ allow: LOOPBACK });
  const via = (to: string) => `${redirecting.origin}/?to=${encodeURIComponent(to)}`;

  it('follows a redirect to another port of the same host, without the credential', async () => {
    const before = target.requests.length;
    const answer = await through(allowed, via(`http://127.0.0.1:${target.port}/moved`), {
      method: 'POST',
      body: '{"a":1}',
      headers: { authorization: 'Bearer secret', 'content-type': 'application/json' },
    });
    expect(answer).toEqual({ status: 200, text: 'ok' });
    const arrived = target.requests.slice(before);
    expect(arrived.map((req) => [req.method, req.url])).toEqual([['POST', '/moved']]);
    expect(arrived[0]?.headers.authorization).toBeUndefined();
  });

  it('refuses a redirect to another host, which is never contacted', async () => {
    const before = target.requests.length;
    for (const to of [
      `http://localhost:${target.port}/`,
      `http://127.0.0.2:${target.port}/`,
      `http://10.0.0.1:${target.port}/`,
    ]) {
      const failure = through(allowed, via(to));
      await expect(failure).rejects.toBeInstanceOf(EgressRefused);
      await expect(failure).rejects.toMatchObject({ reason: 'redirect', host: '127.0.0.1' });
    }
    expect(target.requests.length).toBe(before);
  });

  it('gives up past five hops', async () => {
    let to = `http://127.0.0.1:${target.port}/`;
    for (let i = 0; i < 6; i += 1) to = via(to);
    await expect(through(allowed, to)).rejects.toMatchObject({ reason: 'redirect' });
  });

  it('never goes from https down to http, and turns a POST into a GET on 303', () => {
    const first = new URL('https://mcp.example.test/mcp');
    const hop = { url: first, init: { method: 'POST', body: 'x' } };
    expect(nextHop(first, hop, 307, 'http://mcp.example.test/mcp', 0)).toBeInstanceOf(
      EgressRefused,
    );
    expect(nextHop(first, hop, 307, 'https://user:pw@mcp.example.test/', 0)).toBeInstanceOf(
      EgressRefused,
    );
    const turned = nextHop(first, hop, 303, '/next', 0);
    expect(turned).toMatchObject({ init: { method: 'GET' } });
    expect(turned).not.toHaveProperty('init.body');
    expect(nextHop(first, hop, 308, '/kept', 0)).toMatchObject({
      url: new URL('https://mcp.example.test/kept'),
      init: { method: 'POST', body: 'x' },
    });
  });
});

describe('bounded answers', () => {
  const allowed = new Egress({ allow: LOOPBACK });

  it('refuses an answer whose declared length is over the limit', async () => {
    const outbound = allowed.open({ maxResponseBytes: 1000 });
    try {
      await expect(outbound.fetch(`${large.origin}/declared`)).rejects.toBeInstanceOf(
        ResponseTooLarge,
      );
      expect(outbound.signal.aborted).toBe(true);
      expect(outbound.failure()).toMatchObject({ limit: 1000 });
    } finally {
      await outbound.close();
    }
  });

  it('stops reading a streamed answer at the limit', async () => {
    const outbound = allowed.open({ maxResponseBytes: 1000 });
    try {
      const response = await outbound.fetch(`${large.origin}/chunked`);
      await expect(response.text()).rejects.toBeInstanceOf(ResponseTooLarge);
      expect(outbound.signal.aborted).toBe(true);
    } finally {
      await outbound.close();
    }
  });

  it('lets answers within the limit through', async () => {
    const outbound = allowed.open({ maxResponseBytes: 20_000 });
    try {
      expect((await (await outbound.fetch(`${large.origin}/chunked`)).text()).length).toBe(10_000);
    } finally {
      await outbound.close();
    }
  });
});
