/**
 * Slow clients: a client that sends its headers a byte at a time, or its
 * body, or nothing at all, is cut at the documented timeout, over real sockets, while a
 * tail, whose answer streams for far longer than any of those, is not.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';
import { listeningClient, type OpenedSession, type TurnClient } from '../turns/turn-client.ts';
import { ndjsonTail, until, wsTail } from './tails/tail-fixture.ts';

const TIMEOUTS = { headersMs: 600, requestMs: 1_200, connectionMs: 500, keepAliveMs: 400 };
/** Node checks headers and request timeouts every quarter of the shorter (`timeouts.ts`). */
const CHECK_MS = TIMEOUTS.headersMs / 4;
/** What Node adds to the keep-alive timeout before it closes (`keepAliveTimeoutBuffer`). */
const KEEP_ALIVE_BUFFER_MS = 1_000;
/** Room for a loaded machine's scheduling on top of a timeout. */
const SLACK_MS = 700;

let harness: TestApp;
let client: TurnClient;
let port: number;

beforeAll(async () => {
  harness = await startTestApp({ http: TIMEOUTS });
  client = await listeningClient(harness);
  port = Number(new URL(client.base).port);
});
afterAll(async () => {
  await harness.close();
});

/** A raw connection: what the server sent, and when it closed (ms after `opened`). */
function rawConnection() {
  const socket = net.connect(port, '127.0.0.1');
  const opened = performance.now();
  let received = '';
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    received += chunk;
  });
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => {
    socket.on('close', () => {
      resolve(performance.now() - opened);
    });
  });
  return { socket, closed, received: () => received };
}

/** Writes `text` one byte every `everyMs` until the socket closes. */
function dribble(socket: net.Socket, text: string, everyMs = 50): void {
  let at = 0;
  const timer = setInterval(() => {
    if (socket.destroyed) {
      clearInterval(timer);
      return;
    }
    socket.write(text[at % text.length] ?? 'x');
    at += 1;
  }, everyMs);
  socket.once('close', () => {
    clearInterval(timer);
  });
}

describe('a slow client', () => {
  it('that sends its headers a byte at a time and never ends them is cut at the headers timeout', async () => {
    const slow = rawConnection();
    slow.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    // A byte every 50 ms keeps the connection busy: only the headers timeout can end it.
    dribble(slow.socket, 'X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa');
    const after = await slow.closed;
    expect(after).toBeGreaterThanOrEqual(TIMEOUTS.headersMs - 50);
    expect(after).toBeLessThan(TIMEOUTS.headersMs + CHECK_MS + SLACK_MS);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('that sends its body a byte at a time is cut at the request timeout', async () => {
    const slow = rawConnection();
    slow.socket.write(
      'POST /appdoc HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        'Content-Length: 100000\r\n\r\n{"appdoc":1,"name":"',
    );
    dribble(slow.socket, 'a');
    const after = await slow.closed;
    expect(after).toBeGreaterThanOrEqual(TIMEOUTS.requestMs - 50);
    expect(after).toBeLessThan(TIMEOUTS.requestMs + CHECK_MS + SLACK_MS);
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('that connects and sends nothing is cut at the headers timeout', async () => {
    const idle = rawConnection();
    const after = await idle.closed;
    expect(after).toBeLessThan(TIMEOUTS.headersMs + CHECK_MS + SLACK_MS);
  });

  it('that keeps an answered connection idle is cut at the keep-alive timeout', async () => {
    const kept = rawConnection();
    kept.socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await until(() => kept.received().includes('"status"'), 'the health answer');
    const answered = performance.now();
    await kept.closed;
    const idle = performance.now() - answered;
    expect(idle).toBeGreaterThanOrEqual(TIMEOUTS.keepAliveMs - 50);
    // Node closes a kept-alive connection `keepAliveTimeoutBuffer` (1 s) after the timeout
    // it announces, so that a client never sends on a connection being closed.
    expect(idle).toBeLessThan(TIMEOUTS.keepAliveMs + KEEP_ALIVE_BUFFER_MS + SLACK_MS);
  });
});

describe('a tail', () => {
  let opened: OpenedSession;
  const idleMs = 2 * TIMEOUTS.requestMs + TIMEOUTS.connectionMs;

  beforeAll(async () => {
    const { key } = await client.install();
    opened = await client.open(key);
  });

  it('over NDJSON outlives every timeout while it waits for records, then gets them', async () => {
    const tail = await ndjsonTail(client.base, `/sessions/${opened.session}/events?from=1`, {
      authorization: `Bearer ${opened.token}`,
    });
    expect(tail.status).toBe(200);
    await until(() => tail.lines.length === 1, 'session.opened');
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const cursor = await client.send(opened, 'still there?');
    await until(() => tail.lines.length >= 2, 'the message after the idle spell');
    expect(tail.lines[1]).toMatchObject({ Ok: { envelope: { cursor } } });
    tail.stop();
    await tail.done.catch(() => undefined);
  }, 15_000);

  it('over WebSocket outlives every timeout while it waits for records, then gets them', async () => {
    const url = `${client.base.replace('http', 'ws')}/sessions/${opened.session}/events?from=1`;
    const tail = await wsTail(url, { headers: { authorization: `Bearer ${opened.token}` } });
    await until(() => tail.lines.length >= 1, 'session.opened');
    const before = tail.lines.length;
    await new Promise((resolve) => setTimeout(resolve, idleMs));
    const cursor = await client.send(opened, 'and now?');
    await until(
      () => tail.lines.some((line) => 'Ok' in line && line.Ok.envelope.cursor === cursor),
      'the message after the idle spell',
    );
    expect(tail.lines.length).toBeGreaterThan(before);
    tail.stop();
  }, 15_000);
});
