/**
 * Waiting for consent with RFC 8628 polling against the real service.
 * The service runs on a manual clock, and the client's wait between polls advances that
 * clock (the `sleep` option), so the service sees each poll exactly as late as the client
 * waited: the interval, `slow_down` adding five seconds, a consent through the real
 * consent route, a decline (`access_denied`) and a lapse (`expired_token`).
 */
import { createClient, ServiceProblem, type ConsentProgress } from '@agent-session-service/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.ts';
import type { Owner } from '../support/flow.ts';
import { appDocument, startClientHarness, type ClientHarness } from './harness.ts';

const clock = new ManualClock(Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 1e9));
let h: ClientHarness;
let owner: Owner;
beforeAll(async () => {
  h = await startClientHarness({ clock });
  owner = await h.flow.owner();
  await h.flow.option(owner, 'default');
});
afterAll(async () => {
  await h.close();
});

/** A vendor without credentials, and what its wait reported. */
function vendor() {
  const client = createClient({ baseUrl: h.base });
  const progress: ConsentProgress[] = [];
  const delays: number[] = [];
  return { client, progress, delays, onProgress: (p: ConsentProgress) => progress.push(p) };
}

describe('waiting for consent', () => {
  it('polls at the interval, slows down by five seconds, and answers the receipt', async () => {
    const { client, progress, delays, onProgress } = vendor();
    const proposal = await client.propose(appDocument());
    expect(proposal.interval).toBe(5000);
    const receipt = await client.waitForConsent(proposal, {
      onProgress,
      sleep: async (ms) => {
        delays.push(ms);
        clock.advance(ms);
        if (delays.length === 1) {
          // Another poll with the same secret in between: the client's next is too soon.
          await h.flow.send('POST', '/consent/token', proposal.poll_secret, {
            request: proposal.request,
          });
        } else {
          // The owner consents through the consent route, as the consent page does.
          await h.flow.expect(200, 'POST', `/consent/${proposal.request}`, owner.token, {
            inference: 'default',
          });
        }
      },
    });
    expect(progress).toEqual([
      { state: 'authorization_pending', polls: 1, interval: 5000 },
      { state: 'slow_down', polls: 2, interval: 10_000 },
    ]);
    expect(delays).toEqual([5000, 10_000]);
    expect(receipt.request).toBe(proposal.request);
    expect(receipt.key).toMatch(/^ik_/);
    // The receipt's key is the install's: it opens sessions.
    const install = client.with({ installKey: receipt.key ?? '' });
    expect((await install.openSession('ada')).session).toMatch(/^[0-9a-f]{72}$/);
  });

  it('ends with access_denied when an owner declines', async () => {
    const { client, progress, onProgress } = vendor();
    const proposal = await client.propose(appDocument());
    const waited = client.waitForConsent(proposal, {
      onProgress,
      sleep: async (ms) => {
        clock.advance(ms);
        await h.flow.expect(200, 'POST', `/consent/${proposal.request}/decline`, owner.token);
      },
    });
    const ended = await waited.catch((error: unknown) => error);
    expect(ended).toBeInstanceOf(ServiceProblem);
    expect(ended).toMatchObject({ status: 400, code: 'access_denied' });
    expect((ended as ServiceProblem).body.error).toBe('access_denied');
    expect(progress.map((p) => p.state)).toEqual(['authorization_pending']);
  });

  it('ends with expired_token when the proposal lapses', async () => {
    const { client, progress, onProgress } = vendor();
    const proposal = await client.propose(appDocument());
    const ended = await client
      .waitForConsent(proposal, {
        onProgress,
        sleep: (ms) => {
          clock.advance(ms * 200);
          return Promise.resolve();
        },
      })
      .catch((error: unknown) => error);
    expect(ended).toMatchObject({ status: 400, code: 'expired_token' });
    expect(progress.map((p) => p.state)).toEqual(['authorization_pending']);
  });

  it('stops when its signal aborts', async () => {
    const { client } = vendor();
    const proposal = await client.propose(appDocument());
    const controller = new AbortController();
    const ended = await client
      .waitForConsent(proposal, {
        signal: controller.signal,
        onProgress: () => {
          controller.abort(new Error('the vendor gave up'));
        },
      })
      .catch((error: unknown) => error);
    expect(ended).toMatchObject({ message: 'the vendor gave up' });
  });
});
