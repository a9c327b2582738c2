/**
 * Greedy tail clients: a token holds at most the documented number of
 * open tails (`TAILS_PER_CREDENTIAL`, 50), a session at most `TAILS_PER_SESSION`, one more
 * is 429 `too_many_tails` over NDJSON and WebSocket alike, and a slot is free again once
 * a tail closes; a WebSocket peer that stops answering pings is dropped after the pong
 * timeout, and its slot with it. Sessions and tokens come through the public flow.
 */
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { TAIL_LIMITS } from '../../../src/http/tails/limits.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { listeningClient, type OpenedSession, type TurnClient } from '../../turns/turn-client.ts';
import { within } from './tail-fixture.ts';

const PER_SESSION = 60;
const HEARTBEAT = { pingIntervalMs: 200, pongTimeoutMs: 300 };

let harness: TestApp;
let client: TurnClient;
let installKey: string;

beforeAll(async () => {
  // The documented cap per token; a lower one per session, to reach it with two tokens.
  harness = await startTestApp({ tailLimits: { perSession: PER_SESSION, ...HEARTBEAT } });
  client = await listeningClient(harness);
  installKey = (await client.install()).key;
});
afterAll(async () => {
  await harness.close();
});

const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

/** An NDJSON tail held open: its status, and its body once it is not 200. */
async function tail(opened: OpenedSession, token = opened.token) {
  return new Promise<{ status: number; body: string; close: () => Promise<void> }>(
    (resolve, reject) => {
      const request = http.get(
        `${client.base}/sessions/${opened.session}/events?from=1`,
        { headers: { authorization: `Bearer ${token}` }, agent },
        (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            body += chunk;
          });
          response.on('error', () => undefined);
          const ended = new Promise<void>((settle) => response.on('close', settle));
          const answer = {
            status: response.statusCode ?? 0,
            body: '',
            close: async () => {
              request.destroy();
              await ended;
            },
          };
          if (answer.status === 200) resolve(answer);
          else
            response.on('end', () => {
              resolve({ ...answer, body });
            });
        },
      );
      request.on('error', reject);
    },
  );
}

/** A fresh token of the session, minted with the install key (4.2). */
async function mint(opened: OpenedSession): Promise<string> {
  const answer = await client.call(
    'GET',
    `/sessions/${opened.session}/token?principal=ada`,
    installKey,
  );
  expect(answer.status).toBe(200);
  return (answer.body as { token: string }).token;
}

/** The status a WebSocket upgrade of the tail is answered with. */
async function upgradeStatus(opened: OpenedSession, token: string): Promise<number> {
  const url = `${client.base.replace('http', 'ws')}/sessions/${opened.session}/events?from=1`;
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  return new Promise((resolve) => {
    socket.once('open', () => {
      socket.terminate();
      resolve(101);
    });
    socket.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
    });
    socket.once('error', () => undefined);
  });
}

describe('the tail caps', () => {
  it('refuse the 51st tail of one token with 429 too_many_tails, and free a slot as a tail closes', async () => {
    expect(TAIL_LIMITS.perCredential).toBe(50);
    const opened = await client.open(installKey);
    const held = await Promise.all(
      Array.from({ length: TAIL_LIMITS.perCredential }, () => tail(opened)),
    );
    expect(held.map((t) => t.status)).toEqual(held.map(() => 200));

    const refused = await tail(opened);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({
      status: 429,
      code: 'too_many_tails',
      limit: TAIL_LIMITS.perCredential,
    });
    expect(await upgradeStatus(opened, opened.token)).toBe(429);

    // Another token of the same session is not held back by this one's cap.
    const other = await mint(opened);
    const second = await tail(opened, other);
    expect(second.status).toBe(200);

    // One tail closes: its slot takes the next tail.
    await held.pop()?.close();
    let next = await tail(opened);
    for (const end = Date.now() + 2_000; next.status !== 200 && Date.now() < end;) {
      next = await tail(opened);
    }
    expect(next.status).toBe(200);
    expect((await tail(opened)).status).toBe(429);
    await Promise.all([...held, second, next].map((t) => t.close()));
  }, 30_000);

  it('refuse a tail past the cap of the session whatever token it comes with', async () => {
    const opened = await client.open(installKey);
    const tokens = [opened.token, await mint(opened)];
    const held = await Promise.all(
      Array.from({ length: PER_SESSION }, (_, i) => tail(opened, tokens[i % 2])),
    );
    expect(held.every((t) => t.status === 200)).toBe(true);
    const fresh = await mint(opened);
    const refused = await tail(opened, fresh);
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'too_many_tails', limit: PER_SESSION });
    // Another session is not held back by this one's cap.
    const elsewhere = await client.open(installKey);
    const free = await tail(elsewhere);
    expect(free.status).toBe(200);
    await Promise.all([...held, free].map((t) => t.close()));
  }, 30_000);
});

describe('the WebSocket heartbeat', () => {
  it('drops a peer that never answers a ping after the pong timeout, while a live peer stays', async () => {
    const opened = await client.open(installKey);
    const url = `${client.base.replace('http', 'ws')}/sessions/${opened.session}/events?from=1`;
    const headers = { authorization: `Bearer ${opened.token}` };
    // A stalled peer: its socket stays open, and it never answers a ping.
    const stalled = new WebSocket(url, { headers, autoPong: false });
    let pings = 0;
    stalled.on('ping', () => {
      pings += 1;
    });
    const open = performance.now();
    await new Promise((resolve, reject) => {
      stalled.once('open', resolve);
      stalled.once('error', reject);
    });
    // A live peer (`ws` answers pings on its own) on the same session stays.
    const live = new WebSocket(url, { headers });
    let livePings = 0;
    live.on('ping', () => {
      livePings += 1;
    });
    await new Promise((resolve) => live.once('open', resolve));

    const code = await within(
      5_000,
      new Promise<number>((resolve) => stalled.once('close', resolve)),
      'the stalled peer to be dropped',
    );
    const after = performance.now() - open;
    expect(pings).toBeGreaterThanOrEqual(1);
    // 1006: the server ended the connection without a close frame.
    expect(code).toBe(1006);
    expect(after).toBeGreaterThanOrEqual(HEARTBEAT.pongTimeoutMs);
    // Pinged within 1.5 ping intervals, dropped within 1.5 pong timeouts of that, plus slack.
    expect(after).toBeLessThan(1.5 * (HEARTBEAT.pingIntervalMs + HEARTBEAT.pongTimeoutMs) + 700);

    await new Promise((resolve) => setTimeout(resolve, 3 * HEARTBEAT.pingIntervalMs));
    expect(live.readyState).toBe(WebSocket.OPEN);
    expect(livePings).toBeGreaterThanOrEqual(2);
    live.terminate();
  }, 15_000);

  it('frees the slot of a dropped peer for the next tail of its token', async () => {
    const harnessOne = await startTestApp({ tailLimits: { perCredential: 1, ...HEARTBEAT } });
    try {
      const one = await listeningClient(harnessOne);
      const opened = await one.open((await one.install()).key);
      const url = `${one.base.replace('http', 'ws')}/sessions/${opened.session}/events?from=1`;
      const headers = { authorization: `Bearer ${opened.token}` };
      const stalled = new WebSocket(url, { headers, autoPong: false });
      await new Promise((resolve) => stalled.once('open', resolve));
      const status = async () =>
        (await fetch(`${one.base}/sessions/${opened.session}/events?from=1&to=2`, { headers }))
          .status;
      expect(await status()).toBe(429);
      await within(5_000, new Promise((resolve) => stalled.once('close', resolve)), 'the drop');
      let answered = await status();
      for (const end = Date.now() + 2_000; answered !== 200 && Date.now() < end;) {
        answered = await status();
      }
      expect(answered).toBe(200);
    } finally {
      await harnessOne.close();
    }
  }, 20_000);
});
