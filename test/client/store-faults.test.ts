/**
 * Safe retries on the service's own 503: the log store (Redis, behind a proxy
 * the test mutes) runs an append and its answer is lost, so the service answers 503 with
 * `Retry-After`. The client retries after it with the same
 * Idempotency-Key, and the record is in the log once, at the cursor it is answered.
 */
import { createClient, type Fetch } from '@agent-session-service/client';
import { describe, expect, it } from 'vitest';
import { LOG_ONLY, startTestApp } from '../support/app.ts';
import { fetched, PublicFlow } from '../support/flow.ts';
import { TEST_DATABASE_URL, TEST_REDIS_URL } from '../support/services.ts';
import { closedAfterEach, throughProxy } from '../support/tcp-proxy.ts';
import { drain, message } from './harness.ts';

const { opened, proxyTo } = closedAfterEach();

describe('an append whose store answer is lost', () => {
  it('is retried after the 503’s Retry-After with its key, and lands once', async () => {
    const redis = await proxyTo(TEST_REDIS_URL);
    const harness = await startTestApp({
      ...LOG_ONLY,
      databaseUrl: TEST_DATABASE_URL,
      redisUrl: throughProxy(TEST_REDIS_URL, redis),
    });
    opened.push(harness);
    const base = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    const flow = new PublicFlow(fetched(base), harness.keys.generatedOperatorToken ?? '');
    const install = await flow.install();

    // The store's link comes back as soon as the service has answered 503.
    const statuses: number[] = [];
    const watch: Fetch = async (request) => {
      const response = await globalThis.fetch(request);
      statuses.push(response.status);
      if (response.status === 503) redis.restore();
      return response;
    };
    const client = createClient({ baseUrl: base, installKey: install.key, fetch: watch });
    const session = client.session(await client.openSession('ada'));
    statuses.length = 0;

    redis.mute();
    const envelopes = await session.append([message('store answer lost')]);
    expect(statuses[0]).toBe(503);
    expect(statuses.at(-1)).toBe(200);
    const { items } = await drain(session.tail({ to: 10, signal: AbortSignal.timeout(2000) }));
    const copies = items.filter((r) => r.envelope.kind.name === 'message.submitted');
    expect(copies.map((r) => r.envelope.cursor)).toEqual(envelopes.map((e) => e.cursor));
  }, 60_000);
});
