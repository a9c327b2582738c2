/**
 * `POST /consent/token`, the poll (decisions row 30, RFC 8628 §3.5, notes §3): each answer
 * sees its status and `error`, the interval grows, the receipt repeats until the proposal
 * lapses, and after the lapse the key can no longer be derived.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../../src/clock.ts';
import type { TestApp } from '../../support/app.ts';
import type { OpenApiCheck } from '../../support/openapi-check.ts';
import {
  conforms,
  consent,
  flowApp,
  keyHeaders,
  openApi,
  ownerWithOption,
  poll,
  propose,
  installFor,
  proposeUpdate,
} from './flow-client.ts';

let harness: TestApp;
let clock: ManualClock;
let check: OpenApiCheck;

beforeAll(async () => {
  ({ harness, clock } = await flowApp());
  check = await openApi(harness);
});
afterAll(async () => {
  await harness.close();
});

const URL = '/consent/token';

describe('POST /consent/token', () => {
  it('answers authorization_pending, then slow_down with a growing interval', async () => {
    const proposal = await propose(harness);
    const first = await poll(harness, proposal);
    conforms(check, 'POST', URL, first);
    expect(first.statusCode).toBe(400);
    expect(first.json()).toMatchObject({
      code: 'authorization_pending',
      error: 'authorization_pending',
    });

    // Sooner than 5000 ms: slow down, and the interval is 10000 from now on.
    clock.advance(4999);
    const fast = await poll(harness, proposal);
    conforms(check, 'POST', URL, fast);
    expect(fast.json()).toMatchObject({ code: 'slow_down', error: 'slow_down', interval: 10_000 });
    clock.advance(9999);
    expect((await poll(harness, proposal)).json()).toMatchObject({ interval: 15_000 });
    clock.advance(15_000);
    expect((await poll(harness, proposal)).json()).toMatchObject({
      error: 'authorization_pending',
    });
  });

  it('answers expired_token once ten minutes passed, and consent then finds no request', async () => {
    const owner = await ownerWithOption(harness);
    const proposal = await propose(harness);
    clock.advance(600_000);
    const expired = await poll(harness, proposal);
    conforms(check, 'POST', URL, expired);
    expect(expired.statusCode).toBe(400);
    expect(expired.json()).toMatchObject({ code: 'expired_token', error: 'expired_token' });
    const late = await consent(harness, owner, proposal.request, { inference: 'fast' });
    expect(late.statusCode).toBe(404);
    expect(late.json()).toMatchObject({ code: 'no_such_request' });
  });

  it('repeats the receipt with the key until the lapse, then forgets the key for good', async () => {
    const owner = await ownerWithOption(harness);
    const proposal = await propose(harness);
    await consent(harness, owner, proposal.request, { inference: 'fast' });
    const receipt = await poll(harness, proposal);
    conforms(check, 'POST', URL, receipt);
    expect(receipt.statusCode).toBe(200);
    const { key } = receipt.json<{ key: string }>();
    // Polling fast changes nothing once granted: the receipt is the same.
    expect((await poll(harness, proposal)).json()).toEqual(receipt.json());
    clock.advance(599_000);
    expect((await poll(harness, proposal)).json()).toEqual(receipt.json());

    clock.advance(1000);
    const after = await poll(harness, proposal);
    expect(after.statusCode).toBe(400);
    expect(after.json()).toMatchObject({ error: 'expired_token' });
    // Nothing that derives the key is left with the proposal (src/consent/install-key.ts).
    const stored = await harness.stores.control.get('proposal', '', proposal.request);
    expect(stored?.value.salt).toBeNull();
    // The key itself still runs the install.
    const appdoc = await harness.app.inject({
      method: 'GET',
      url: '/appdoc',
      headers: keyHeaders(key),
    });
    expect(appdoc.statusCode).toBe(200);
  });

  it('answers an update with the install and a null key (the key is kept)', async () => {
    const owner = await ownerWithOption(harness);
    const installed = await installFor(harness, owner);
    const { install } = installed;
    const update = await proposeUpdate(harness, installed);
    const second = update.json<{ request: string; poll_secret: string; vendor: string }>();
    expect((await poll(harness, second)).json()).toMatchObject({ error: 'authorization_pending' });
    await consent(harness, owner, second.request, { inference: 'fast' });
    clock.advance(5000);
    const receipt = await poll(harness, second);
    expect(receipt.statusCode).toBe(200);
    expect(receipt.json()).toEqual({
      request: second.request,
      install,
      key: null,
      vendor: second.vendor,
    });
  });

  it('refuses a secret that does not match with 401, and no secret at all', async () => {
    const proposal = await propose(harness);
    const other = await propose(harness);
    expect((await poll(harness, proposal)).json()).toMatchObject({
      error: 'authorization_pending',
    });
    clock.advance(5000);
    const cases = [
      other.poll_secret, // a real secret of another request
      `ps_${randomBytes(32).toString('base64url')}`, // well formed, never issued
      'ps_short', // not one of ours
    ];
    for (const secret of cases) {
      const refused = await poll(harness, proposal, secret);
      conforms(check, 'POST', URL, refused);
      expect(refused.statusCode).toBe(401);
      expect(refused.json()).toMatchObject({ code: 'invalid_token' });
      expect(refused.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    }
    const unknown = await poll(harness, {
      request: 'rq_unknown',
      poll_secret: proposal.poll_secret,
    });
    expect(unknown.statusCode).toBe(401);
    // An unknown request never wakes an actor, so it leaves nothing behind.
    expect(await harness.stores.control.loadSnapshot('proposal', 'rq_unknown')).toBeNull();
    const none = await harness.app.inject({
      method: 'POST',
      url: URL,
      payload: { request: proposal.request },
    });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ code: 'unauthenticated' });
    // A wrong secret did not count as a poll: the next good one is not too fast.
    expect((await poll(harness, proposal)).json()).toMatchObject({
      error: 'authorization_pending',
    });
  });

  it('refuses a body without its request (400 naming the field)', async () => {
    const proposal = await propose(harness);
    const response = await harness.app.inject({
      method: 'POST',
      url: URL,
      headers: keyHeaders(proposal.poll_secret),
      payload: {},
    });
    conforms(check, 'POST', URL, response);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'invalid_request', field: 'body.request' });
  });
});
