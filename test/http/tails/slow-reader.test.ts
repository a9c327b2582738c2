/**
 * A slow NDJSON reader: the service as users run it (a child process on
 * Redis) with a 64 KiB tail buffer; a reader attaches, reads the answer's headers and
 * stops reading while about 100 MiB of records land through the HTTP API. The service's
 * RSS stays within RSS_BOUND of where it started (it would grow by the records landed if
 * it held them for the reader); the tail is closed once it has lagged for
 * TAIL_LAG_TIMEOUT (its slot is free again, the connection ends); and a reader that tails
 * again from after the last record it read gets every later record once: no gap, no
 * repeat.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TailLine } from '../../../src/schemas/records.ts';
import { startService, type ServiceProcess } from '../../support/service-process.ts';
import { TEST_REDIS_URL } from '../../support/services.ts';
import { TurnClient, type OpenedSession } from '../../turns/turn-client.ts';
import { cursors, within } from './tail-fixture.ts';

const OPERATOR_TOKEN = randomBytes(32).toString('base64url');
const LAG_MS = 40_000;
/** Batches of 10 messages of 90,000 characters: about 0.9 MB a request, 64 MiB in all. */
const BATCHES = 75;
const TEXT = 90_000;
const MIDWAY = 25;
/** How far the service's RSS may rise above that of its twin under the same load. */
const RSS_BOUND = 32 * 1024 * 1024;

/** One service and the client of its API. */
interface Deployment {
  readonly service: ServiceProcess;
  readonly client: TurnClient;
}

const dirs: string[] = [];
let tailed: Deployment;
let twin: Deployment;

async function deploy(): Promise<Deployment> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'slow-reader-'));
  dirs.push(dataDir);
  const service = await startService(
    {
      OPERATOR_TOKEN,
      DATA_DIR: dataDir,
      REDIS_URL: TEST_REDIS_URL,
      TAIL_BUFFER_BYTES: String(64 * 1024),
      TAIL_LAG_TIMEOUT: `${LAG_MS}ms`,
      // One tail per token: a second tail with the token shows whether the first is open.
      TAILS_PER_CREDENTIAL: '1',
      RATE_LIMIT_PER_SECOND: '100000',
    },
    40_000,
    // A heap held to a working size, so that RSS follows what the process keeps alive
    // rather than how far V8 lets garbage pile up between collections. On the command
    // line, after the start script's flags: in NODE_OPTIONS theirs would win.
    ['--max-old-space-size=256', '--max-semi-space-size=4'],
  );
  return { service, client: new TurnClient(service.url, OPERATOR_TOKEN) };
}

beforeAll(async () => {
  tailed = await deploy();
  twin = await deploy();
}, 90_000);
afterAll(async () => {
  await Promise.all([tailed.service.kill(), twin.service.kill()]);
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A service's resident set, in bytes (Linux). */
async function rss({ service }: Deployment): Promise<number> {
  const status = await readFile(`/proc/${String(service.child.pid)}/status`, 'utf8');
  const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
  return Number(kb) * 1024;
}

/** Lands one batch of 10 large messages through the API; answers the last cursor. */
async function appendBatch(
  { client }: Deployment,
  opened: OpenedSession,
  i: number,
): Promise<number> {
  const records = Array.from({ length: 10 }, (_, j) => ({
    kind: { name: 'message.submitted', version: 1 },
    body: { text: `${i}.${j} `.padEnd(TEXT, 'x') },
  }));
  const answer = await client.call(
    'POST',
    `/sessions/${opened.session}/events`,
    opened.token,
    records,
    { 'idempotency-key': randomUUID() },
  );
  expect(answer.status).toBe(200);
  return (answer.body as { cursor: number }[]).at(-1)?.cursor ?? 0;
}

/** An NDJSON tail whose reader reads the headers, then nothing until `resume`. */
async function pausedTail({ service }: Deployment, opened: OpenedSession) {
  return new Promise<{ response: http.IncomingMessage; status: number }>((resolve, reject) => {
    const request = http.get(
      `${service.url}/sessions/${opened.session}/events?from=1`,
      { headers: { authorization: `Bearer ${opened.token}` }, agent: false },
      (response) => {
        response.pause();
        resolve({ response, status: response.statusCode ?? 0 });
      },
    );
    request.on('error', reject);
  });
}

/** Reads what is left of a paused answer to its end; answers its complete lines. */
async function readRest(response: http.IncomingMessage): Promise<TailLine[]> {
  let text = '';
  response.setEncoding('utf8');
  response.on('data', (chunk: string) => {
    text += chunk;
  });
  await new Promise<void>((resolve) => {
    response.on('close', resolve);
    response.on('error', () => {
      resolve();
    });
    response.resume();
  });
  // A line cut by the close is not a line.
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  return complete
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as TailLine);
}

/** Whether a second tail with the token is admitted (200) or refused (429). */
async function probe({ service }: Deployment, opened: OpenedSession): Promise<number> {
  const response = await fetch(`${service.url}/sessions/${opened.session}/events?from=1&to=2`, {
    headers: { authorization: `Bearer ${opened.token}` },
  });
  await response.text();
  return response.status;
}

/** An install and a session on `deployment` whose turn waits: messages only queue. */
async function quietSession({ client }: Deployment): Promise<OpenedSession> {
  const { key } = await client.install();
  const opened = await client.open(key);
  // The simulated model answers this turn in ten minutes: the messages that follow queue
  // for the next turn, so the load is the appends and the tails, not turns.
  await client.send(opened, '/slow 600000');
  return opened;
}

describe('a slow NDJSON reader', () => {
  it('leaves the RSS bounded, is closed once it lags, and resumes without gap or repeat', async () => {
    const [opened, twinSession] = await Promise.all([quietSession(tailed), quietSession(twin)]);
    const slow = await pausedTail(tailed, opened);
    expect(slow.status).toBe(200);

    // The same load on both services, the tailed one with its reader stalled.
    const before = [await rss(tailed), await rss(twin)];
    const peak = [...before];
    let head = 0;
    const started = Date.now();
    for (let i = 0; i < BATCHES; i += 1) {
      [head] = await Promise.all([
        appendBatch(tailed, opened, i),
        appendBatch(twin, twinSession, i),
      ]);
      // Midway, well within its lag allowance, the stalled tail still holds its slot.
      if (i === MIDWAY && Date.now() - started < LAG_MS - 2_000) {
        expect(await probe(tailed, opened)).toBe(429);
      }
      if (i % 5 === 4) {
        const now = [await rss(tailed), await rss(twin)];
        peak[0] = Math.max(peak[0] ?? 0, now[0] ?? 0);
        peak[1] = Math.max(peak[1] ?? 0, now[1] ?? 0);
      }
    }
    const landedIn = Date.now() - started;
    const mib = (bytes = 0) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
    console.log(
      `slow reader: ${BATCHES * 10} records of ${TEXT} characters landed in ${landedIn} ms on each; ` +
        `RSS with the stalled tail ${mib(before[0])} before, peak ${mib(peak[0])}; ` +
        `its twin without ${mib(before[1])}, peak ${mib(peak[1])}; bound: twin + ${mib(RSS_BOUND)}`,
    );
    expect(peak[0] ?? 0).toBeLessThan((peak[1] ?? 0) + RSS_BOUND);

    // Past its lag allowance the stalled tail is closed: its slot takes a new tail.
    const closedBy = Date.now() + 2 * LAG_MS;
    let admitted = await probe(tailed, opened);
    while (admitted !== 200 && Date.now() < closedBy) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      admitted = await probe(tailed, opened);
    }
    expect(admitted).toBe(200);

    // The reader reads again: what reached it before the close, then the end.
    const read = await within(2 * LAG_MS, readRest(slow.response), 'the closed tail to end');
    const got = cursors(read);
    expect(got.length).toBeGreaterThan(0);
    expect(got).toEqual(Array.from({ length: got.length }, (_, i) => i + 1));
    const last = read.at(-1);
    if (last !== undefined && 'Err' in last) {
      expect(last.Err).toMatchObject({ code: 'reader_lagging', cursor: (got.at(-1) ?? 0) + 1 });
    }
    expect(got.at(-1)).toBeLessThan(head);

    // Tailing again from after the last record read gives the rest, once each. (Read a
    // hundred records at a time: the Redis store catches a tail up in pages of 500
    // records, and 500 of these would be 45 MB in one reply for the capped heap.)
    const { head: now } = await tailed.client.status(opened);
    const resumed: number[] = [];
    for (let from = (got.at(-1) ?? 0) + 1; from <= now; from += 100) {
      const rest = await fetch(
        `${tailed.service.url}/sessions/${opened.session}/events?from=${from}&to=${Math.min(from + 100, now + 1)}`,
        { headers: { authorization: `Bearer ${opened.token}` } },
      );
      expect(rest.status).toBe(200);
      const lines = (await rest.text())
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as TailLine);
      resumed.push(...cursors(lines));
    }
    expect([...got, ...resumed]).toEqual(Array.from({ length: now }, (_, i) => i + 1));
  }, 180_000);
});
