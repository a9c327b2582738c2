/**
 * An open tail listens to the service's shutdown signal, and its log store's tail to the
 * reader's signal and the store's own close, through plain signals (`storage/any-signal.ts`)
 * rather than `AbortSignal.any`: every open tail holds them, so their cost is per tail. A
 * plain signal's listeners stay on its sources until released; these tests show every
 * tail releases them when it ends, over both transports and on the log store's tail.
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
  it('leaves no listener on the shutdown signal, NDJSON or WebSocket', async () => {
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
    // Open, each tail listens: what the test looks for is there to be found.
    expect(listeners(shutdown)).toBeGreaterThanOrEqual(before + tails.length);
    for (const tail of tails) tail.stop();
    // A reader that hangs up ends its NDJSON answer with an abort: settled either way.
    await Promise.allSettled(tails.map((tail) => tail.done));
    await until(() => listeners(shutdown) === before, 'the tails to release the shutdown signal');
  });

  it("leaves no listener on its reader's signal once the log store's tail ends", async () => {
    const session = await openTestSession(harness);
    await append(harness, session, [record('message.submitted', { text: 'm' })]);
    const reader = new AbortController();
    const tail = harness.stores.log.tail(session.id, { from: 1, signal: reader.signal });
    const records = tail[Symbol.asyncIterator]();
    const first = await records.next();
    expect(first.done).toBe(false);
    expect(listeners(reader.signal)).toBe(1);
    await records.return?.(undefined);
    expect(listeners(reader.signal)).toBe(0);
  });
});
