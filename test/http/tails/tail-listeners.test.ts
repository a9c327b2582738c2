/**
 * Every open tail holds what it listens to, so the tails listen to as little as they can:
 * the service's shutdown signal is heard once for every tail of the app, not once per
 * tail, and a log store's tail listens to its reader's signal only while it waits for a
 * record, and lets go of it once it ends.
 */
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
