/**
 * A shutdown is not held by a connection that never sent a request: the app closes at
 * once, while a request in flight when the close starts still gets its answer, and its
 * kept-alive connection does not hold the close once answered.
 */
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterEach, expect, it } from 'vitest';
import { LOG_ONLY, startTestApp, type TestApp } from '../support/app.ts';

let harness: TestApp | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function listening(routes?: (app: TestApp['app']) => void): Promise<number> {
  harness = await startTestApp({ ...LOG_ONLY, ...(routes === undefined ? {} : { routes }) });
  await harness.app.listen({ port: 0, host: '127.0.0.1' });
  return (harness.app.server.address() as net.AddressInfo).port;
}

/** A connection that is opened and says nothing; resolves once it is connected. */
async function silentConnection(port: number): Promise<{ closed: Promise<void> }> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      resolve();
    }),
  );
  await new Promise<void>((resolve) =>
    socket.once('connect', () => {
      resolve();
    }),
  );
  return { closed };
}

it('closes at once with a connection open that never sent a request', async () => {
  const port = await listening();
  const silent = await silentConnection(port);
  const started = performance.now();
  // The app's own close, without the test harness's forced drop of what is left.
  await harness?.app.close();
  expect(performance.now() - started).toBeLessThan(2_000);
  await silent.closed;
});

it('still answers a request that was in flight when the close started', async () => {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let arrived!: () => void;
  const inFlight = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const port = await listening((app) => {
    app.get('/probe/held', async () => {
      arrived();
      await held;
      return { done: true };
    });
  });
  const silent = await silentConnection(port);
  const answer = fetch(`http://127.0.0.1:${port}/probe/held`).then(async (response) => ({
    status: response.status,
    body: await response.json(),
  }));
  await inFlight;
  const closing = harness?.app.close();
  await silent.closed;
  release();
  expect(await answer).toEqual({ status: 200, body: { done: true } });
  // Its kept-alive connection, idle once answered, does not hold the close either.
  const answered = performance.now();
  await closing;
  expect(performance.now() - answered).toBeLessThan(2_000);
});
