/**
 * Every open tail holds what it listens to, so the tails listen to as little as they can:
 * the service's shutdown signal is heard once for every tail of the app, not once per
 * tail, and a log store's tail listens to its reader's signal only while it waits for a
 * record, and lets go of it once it ends. An open WebSocket tail keeps nothing of the
 * HTTP request that opened it, and waits for its next record without a pending promise.
 */
import { getEventListeners } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { queryObjects, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { LOG_ONLY, startTestApp, type TestApp } from '../../support/app.ts';
import {
  append,
  ndjsonTail,
  openTestSession,
  record,
  tokenFor,
  until,
  wsTail,
  type OpenTail,
} from './tail-fixture.ts';

let harness: TestApp;
let base: string;

beforeAll(async () => {
  harness = await startTestApp(LOG_ONLY);
  base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await harness.close();
});

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('an ended tail', () => {
  it('never listened on the shutdown signal on its own, NDJSON or WebSocket', async () => {
    const session = await openTestSession(harness);
    const token = await tokenFor(harness, session);
    const shutdown = harness.deps.shutdown;
    const before = listeners(shutdown);
    const path = `/sessions/${session.id}/events?from=1`;
    const tails: OpenTail[] = [];
    for (let i = 0; i < 3; i += 1) {
      tails.push(await ndjsonTail(base, path, { authorization: `Bearer ${token}` }));
      tails.push(
        await wsTail(`${base.replace('http', 'ws')}${path}`, {
          headers: { authorization: `Bearer ${token}` },
        }),
      );
    }
    await append(harness, session, [record('message.submitted', { text: 'm' })]);
    await until(() => tails.every((tail) => tail.lines.length > 0), 'every tail to read a line');
    // The app listens once, before any tail opens, for all its tails.
    expect(listeners(shutdown)).toBe(before);
    for (const tail of tails) tail.stop();
    // A reader that hangs up ends its NDJSON answer with an abort: settled either way.
    await Promise.allSettled(tails.map((tail) => tail.done));
    expect(listeners(shutdown)).toBe(before);
  });

  it("leaves no listener on its reader's signal once the log store's tail ends", async () => {
    const session = await openTestSession(harness);
    await append(harness, session, [record('message.submitted', { text: 'm' })]);
    const reader = new AbortController();
    const tail = harness.stores.log.tail(session.id, { from: 1, signal: reader.signal });
    const records = tail[Symbol.asyncIterator]();
    const head = (await harness.stores.log.head(session.id))?.head;
    for (let read = await records.next(); ; read = await records.next()) {
      if (read.done === true) throw new Error('the tail ended before the head');
      if (read.value.envelope.cursor === head) break;
    }
    // Caught up: the tail waits for the next record, and hears its reader while it waits.
    const waiting = records.next();
    await until(() => listeners(reader.signal) === 1, 'the tail to wait on its reader');
    reader.abort();
    expect((await waiting).done).toBe(true);
    expect(listeners(reader.signal)).toBe(0);
  });
});

/** A full collection, so that what nothing holds is gone (`WeakRef.deref`). */
async function collect(): Promise<void> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as (options: { type: 'major'; execution: 'sync' }) => void;
  // A WeakRef read in this turn holds its target until the turn ends.
  await new Promise((resolve) => setImmediate(resolve));
  gc({ type: 'major', execution: 'sync' });
}

describe('an open WebSocket tail', () => {
  it('lets go of its upgrade request, and still serves its lines', async () => {
    const session = await openTestSession(harness);
    const token = await tokenFor(harness, session);
    const requests: WeakRef<IncomingMessage>[] = [];
    const upgrading = (request: IncomingMessage): void => {
      requests.push(new WeakRef(request));
    };
    harness.app.server.on('upgrade', upgrading);
    const tail = await wsTail(
      `${base.replace('http', 'ws')}/sessions/${session.id}/events?from=1`,
      { headers: { authorization: `Bearer ${token}` } },
    ).finally(() => {
      harness.app.server.off('upgrade', upgrading);
    });
    try {
      await append(harness, session, [record('message.submitted', { text: 'first' })]);
      await until(() => tail.lines.length === 1, 'the tail to read the first line');
      await collect();
      expect(requests).toHaveLength(1);
      expect(requests[0]?.deref()).toBeUndefined();
      await append(harness, session, [record('message.submitted', { text: 'second' })]);
      await until(() => tail.lines.length === 2, 'the tail to read the second line');
    } finally {
      tail.stop();
      await tail.done;
    }
  });

  it('still logs a failed connection with its request id, and ends it', async () => {
    const session = await openTestSession(harness);
    const token = await tokenFor(harness, session);
    const tail = await wsTail(
      `${base.replace('http', 'ws')}/sessions/${session.id}/events?from=1`,
      { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'ws-failed-probe' } },
    );
    // A message over the body limit (64 KiB here) fails the connection on the server.
    tail.socket.send(Buffer.alloc(128 * 1024));
    await tail.closed;
    await until(
      () =>
        harness.logs.lines().some((line) => line.reqId === 'ws-failed-probe' && line.level === 50),
      'the failure to be logged with the request id',
    );
  });
});

describe('waiting WebSocket tails', () => {
  it('hold no pending promise while they wait for their next record', async () => {
    const session = await openTestSession(harness);
    const token = await tokenFor(harness, session);
    const [landed] = await append(harness, session, [record('message.submitted', { text: 'm' })]);
    const from = landed?.cursor ?? 0;
    const url = `${base.replace('http', 'ws')}/sessions/${session.id}/events?from=${from}`;
    // Plain sockets with callbacks, so the readers hold no promise of their own.
    const sockets: WebSocket[] = [];
    let lines = 0;
    const open = async (count: number): Promise<void> => {
      for (let i = 0; i < count; i += 1) {
        const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
        socket.on('message', () => (lines += 1));
        sockets.push(socket);
      }
      // Each read the record and waits for the next.
      await until(() => lines === sockets.length, 'every tail to read the first record');
      await new Promise((resolve) => setTimeout(resolve, 50));
    };
    const TAILS = 20;
    try {
      await open(TAILS);
      const before = queryObjects(Promise, { format: 'count' });
      await open(TAILS);
      const after = queryObjects(Promise, { format: 'count' });
      // Five per tail when each layer's `next` waited on the one below (sender, lines,
      // store loop, subscription); none now, with slack for the app's own.
      expect(after - before).toBeLessThan(TAILS / 2);
    } finally {
      for (const socket of sockets) socket.terminate();
    }
  });
});
