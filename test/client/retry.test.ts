/**
 * Retries against the real service's rate limits (`src/http/rate-limit.ts`): a
 * 429 is retried after its `Retry-After`, a bounded number of times; no other refusal is
 * ever sent twice. The client's `fetch` is wrapped only to watch what goes over the wire.
 */
import { createClient, ServiceProblem, type Fetch } from '@agent-session-service/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOG_ONLY } from '../support/app.ts';
import { message, startClientHarness, type ClientHarness } from './harness.ts';

let h: ClientHarness;
beforeAll(async () => {
  // One append per session token a second: the second append in a row is answered 429.
  h = await startClientHarness({
    ...LOG_ONLY,
    rateLimits: { appends: { max: 1, windowMs: 1000 } },
  });
});
afterAll(async () => {
  await h.close();
});

interface Seen {
  readonly status: number;
  readonly at: number;
  readonly retryAfter: string | null;
}

/** A client of the harness whose every answer is noted in `seen`. */
function watched(retries?: number) {
  const seen: Seen[] = [];
  const watch: Fetch = async (request) => {
    const response = await globalThis.fetch(request);
    seen.push({
      status: response.status,
      at: Date.now(),
      retryAfter: response.headers.get('retry-after'),
    });
    return response;
  };
  const client = createClient({
    baseUrl: h.base,
    installKey: h.install.key,
    fetch: watch,
    ...(retries === undefined ? {} : { retry: { retries } }),
  });
  return { client, seen };
}

describe('retries', () => {
  it('retry a 429 after its Retry-After, and the append lands', async () => {
    const { client, seen } = watched();
    const session = client.session(await client.openSession('ada'));
    await session.append([message('first')]);
    seen.length = 0;
    const envelopes = await session.append([message('second')]);
    expect(envelopes.map((e) => e.cursor)).toEqual([3]);
    expect(seen.map((s) => s.status)).toEqual([429, 200]);
    const [limited, landed] = seen as [Seen, Seen];
    const wait = Number(limited.retryAfter) * 1000;
    expect(wait).toBeGreaterThan(0);
    // The retry went no sooner than the service asked.
    expect(landed.at - limited.at).toBeGreaterThanOrEqual(wait - 50);
  });

  it('stop after the retries the policy allows, throwing the 429 as a ServiceProblem', async () => {
    const { client, seen } = watched(0);
    const session = client.session(await client.openSession('ada'));
    await session.append([message('first')]);
    seen.length = 0;
    const refused = await session.append([message('second')]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceProblem);
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(seen.map((s) => s.status)).toEqual([429]);
  });

  it('never resend any other refusal', async () => {
    const { client, seen } = watched();
    const grant = await client.openSession('ada');
    await client.archive(grant.session);
    seen.length = 0;
    const refused = await client
      .session(grant)
      .append([message('late')])
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ status: 409, code: 'session_archived' });
    expect(seen.map((s) => s.status)).toEqual([409]);
  });
});
