import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOSE } from '../../../src/http/tails/websocket.ts';
import { LOG_ONLY, startTestApp, type TestApp } from '../../support/app.ts';
import {
  append,
  archive,
  cursors,
  ndjsonTail,
  openTestSession,
  record,
  tokenFor,
  until,
  within,
  wsTail,
} from './tail-fixture.ts';

let harness: TestApp;
let base: string;

beforeAll(async () => {
  // Bulk records are near 100 KB each: over the default body limit.
  harness = await startTestApp({ ...LOG_ONLY, bodyLimit: 1024 * 1024 });
  base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await harness.close();
});

/**
 * Records big enough that a few dozen overflow every socket buffer between us and a reader:
 * messages of 99,000 characters (a message holds at most 100,000), landed two to a batch.
 */
const BULK_BATCHES = 96;
const BULK_RECORDS = 2 * BULK_BATCHES;
const bulk = (i: number) =>
  [0, 1].map((j) => record('message.submitted', { text: `${i}.${j}:`.padEnd(99_000, 'x') }));

/** A reader that reads the answer's headers, then stops reading its socket. */
async function pausedReader(base: string, path: string, token: string) {
  return new Promise<{ response: http.IncomingMessage; request: http.ClientRequest }>(
    (resolve, reject) => {
      const request = http.get(`${base}${path}`, {
        headers: { authorization: `Bearer ${token}` },
        agent: false,
      });
      request.on('response', (response) => {
        response.pause();
        resolve({ response, request });
      });
      request.on('error', reject);
    },
  );
}

describe('a slow NDJSON reader', () => {
  // Within its lag allowance (TAIL_LAG_TIMEOUT, long here): past it the reader is dropped
  // (slow-reader.test.ts).
  let patient: TestApp;
  beforeAll(async () => {
    patient = await startTestApp({
      ...LOG_ONLY,
      bodyLimit: 1024 * 1024,
      tailLimits: { lagMs: 60_000 },
    });
  });
  afterAll(async () => {
    await patient.close();
  });

  it('blocks neither appends nor another tail, and reads everything once it reads again', async () => {
    const harness = patient;
    const base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    const session = await openTestSession(harness);
    const token = await tokenFor(harness, session);
    const slow = await pausedReader(base, `/sessions/${session.id}/events?from=1`, token);
    const fast = await ndjsonTail(base, `/sessions/${session.id}/events?from=1`, {
      authorization: `Bearer ${token}`,
    });
    const started = Date.now();
    let slowest = 0;
    for (let i = 0; i < BULK_BATCHES; i += 1) {
      const before = Date.now();
      await append(harness, session, bulk(i));
      slowest = Math.max(slowest, Date.now() - before);
    }
    await archive(harness, session);
    await within(15_000, fast.done, 'the fast tail to read every record');
    expect(cursors(fast.lines)).toEqual(Array.from({ length: BULK_RECORDS + 2 }, (_, i) => i + 1));
    expect(slowest).toBeLessThan(1_000);
    expect(Date.now() - started).toBeLessThan(15_000);
    // The slow reader still holds its connection and has taken in a sliver of the log.
    expect(slow.response.complete).toBe(false);
    expect(slow.response.socket.bytesRead).toBeLessThan(2 * 1024 * 1024);

    // Reading again, it gets every record once, in order: the store caught it up from the log.
    const seen: number[] = [];
    let rest = '';
    slow.response.setEncoding('utf8');
    slow.response.on('data', (chunk: string) => {
      rest += chunk;
      for (let at = rest.indexOf('\n'); at >= 0; at = rest.indexOf('\n')) {
        const line = JSON.parse(rest.slice(0, at)) as { Ok: { envelope: { cursor: number } } };
        seen.push(line.Ok.envelope.cursor);
        rest = rest.slice(at + 1);
      }
    });
    slow.response.resume();
    await within(
      15_000,
      new Promise((resolve) => slow.response.on('end', resolve)),
      'the slow tail',
    );
    expect(seen).toEqual(Array.from({ length: BULK_RECORDS + 2 }, (_, i) => i + 1));
  });
});

describe('a lagging WebSocket reader', () => {
  it('is closed with 1013 and a reason, while appends and other tails go on', async () => {
    const session = await openTestSession(harness);
    const token = await tokenFor(harness, session);
    const url = `${base.replace('http', 'ws')}/sessions/${session.id}/events?from=1`;
    const lagging = await wsTail(url, { headers: { authorization: `Bearer ${token}` } });
    lagging.socket.pause();
    const other = await wsTail(url, { headers: { authorization: `Bearer ${token}` } });
    for (let i = 0; i < BULK_BATCHES; i += 1) await append(harness, session, bulk(i));
    await until(() => other.lines.length === BULK_RECORDS + 1, 'the other tail', 15_000);

    // The server gives up on the lagging reader once its buffer stays full past the limit.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    lagging.socket.resume();
    const closed = await within(15_000, lagging.closed, 'the lagging tail to close');
    expect(closed).toEqual({ code: CLOSE.lagging.code, reason: CLOSE.lagging.reason });
    expect(closed.code).toBe(1013);
    // It got a prefix of the log, in order, and not all of it.
    const got = cursors(lagging.lines);
    expect(got).toEqual(Array.from({ length: got.length }, (_, i) => i + 1));
    expect(got.length).toBeLessThan(BULK_RECORDS + 1);

    // The other reader is untouched: it follows on to the end.
    await archive(harness, session);
    expect((await within(5_000, other.closed, 'the other tail')).code).toBe(1000);
    expect(cursors(other.lines)).toEqual(Array.from({ length: BULK_RECORDS + 2 }, (_, i) => i + 1));

    // The dropped reader tails again from after its last record: the rest, once each.
    const again = await wsTail(
      `${base.replace('http', 'ws')}/sessions/${session.id}/events?from=${(got.at(-1) ?? 0) + 1}`,
      { headers: { authorization: `Bearer ${token}` } },
    );
    expect((await within(15_000, again.closed, 'the resumed tail')).code).toBe(1000);
    expect([...got, ...cursors(again.lines)]).toEqual(
      Array.from({ length: BULK_RECORDS + 2 }, (_, i) => i + 1),
    );
  }, 60_000);
});
