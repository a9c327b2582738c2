/**
 * `POST /consent/{request}/decline`: an owner declines a proposal, the
 * vendor's poll answers RFC 8628 `access_denied` from then on, and every other condition
 * sees its status and code.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../../src/clock.ts';
import type { TestApp } from '../../support/app.ts';
import { setMembers, type ConsoleUser } from '../../support/console.ts';
import type { OpenApiCheck } from '../../support/openapi-check.ts';
import {
  conforms,
  consent,
  flowApp,
  openApi,
  ownerWithOption,
  poll,
  propose,
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

const decline = async (user: ConsoleUser | null, request: string) => {
  const url = `/consent/${request}/decline`;
  const response = await harness.app.inject({
    method: 'POST',
    url,
    headers: user === null ? {} : user.headers,
  });
  conforms(check, 'POST', url, response);
  return response;
};

describe('POST /consent/{request}/decline', () => {
  it('declines: the poll answers access_denied, a consent 409, the read says declined', async () => {
    const owner = await ownerWithOption(harness);
    const proposal = await propose(harness);
    const declined = await decline(owner, proposal.request);
    expect(declined.statusCode, declined.body).toBe(200);
    expect(declined.json()).toEqual({ request: proposal.request, state: 'declined' });

    const answer = await poll(harness, proposal);
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toMatchObject({ error: 'access_denied', code: 'access_denied' });

    const read = await harness.app.inject({
      method: 'GET',
      url: `/consent/${proposal.request}`,
      headers: owner.headers,
    });
    expect(read.json()).toMatchObject({ state: 'declined', install: null });
    const consented = await consent(harness, owner, proposal.request, { inference: 'fast' });
    expect(consented.statusCode).toBe(409);
    expect(consented.json()).toMatchObject({ code: 'request_declined' });
    // Declining again answers the same.
    expect((await decline(owner, proposal.request)).statusCode).toBe(200);
    // Declined is final: a poll past the ten minutes still says to stop.
    clock.advance(700_000);
    expect((await poll(harness, proposal)).json()).toMatchObject({ error: 'access_denied' });
  });

  it('refuses a granted request with 409 naming its install', async () => {
    const owner = await ownerWithOption(harness);
    const proposal = await propose(harness);
    const granted = await consent(harness, owner, proposal.request, { inference: 'fast' });
    expect(granted.statusCode, granted.body).toBe(200);
    const response = await decline(owner, proposal.request);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({
      code: 'already_granted',
      install: granted.json<{ install: string }>().install,
    });
    clock.advance(5000);
    expect((await poll(harness, proposal)).statusCode).toBe(200);
  });

  it('answers 401 without a token, 403 to a member, 404 for an unknown or lapsed request', async () => {
    const owner = await ownerWithOption(harness);
    const [member] = await setMembers(harness, owner, [
      { user: `m-${randomUUID()}`, role: 'member' },
    ]);
    if (member === undefined) throw new Error('no member');
    const proposal = await propose(harness);
    expect((await decline(null, proposal.request)).statusCode).toBe(401);
    const refused = await decline(member, proposal.request);
    expect(refused.statusCode).toBe(403);
    const unknown = await decline(owner, `rq_${'0'.repeat(32)}`);
    expect([unknown.statusCode, unknown.json<{ code: string }>().code]).toEqual([
      404,
      'no_such_request',
    ]);
    // Nothing changed: the poll still waits.
    expect((await poll(harness, proposal)).json()).toMatchObject({
      error: 'authorization_pending',
    });
    clock.advance(600_000);
    expect((await decline(owner, proposal.request)).statusCode).toBe(404);
    clock.advance(5000);
    expect((await poll(harness, proposal)).json()).toMatchObject({ error: 'expired_token' });
  });
});
