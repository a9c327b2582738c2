/**
 * What piles up: an unauthenticated `POST /appdoc` has its own small body
 * limit, and every proposal, lapsed or granted, is deleted a retention period after its
 * ten minutes, machine snapshot and all, while the install a consent made stays.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../../src/clock.ts';
import { DEFAULT_APPDOC_BODY_LIMIT } from '../../../src/http/proposals/appdoc.ts';
import { PROPOSAL_ACTOR } from '../../../src/actors/proposal.actor.ts';
import type { TestApp } from '../../support/app.ts';
import {
  consent,
  flowApp,
  keyHeaders,
  ownerWithOption,
  poll,
  propose,
  vendorDoc,
  type Proposal,
  installFor,
  proposeUpdate,
} from './flow-client.ts';

const RETENTION_MS = 60_000;
const LIFETIME_MS = 600_000;

let harness: TestApp;
let clock: ManualClock;

beforeAll(async () => {
  ({ harness, clock } = await flowApp({
    bodyLimit: 1024 * 1024,
    proposalRetentionMs: RETENTION_MS,
  }));
});
afterAll(async () => {
  await harness.close();
});

/** Whether anything of the proposal is still stored: its resource or its machine. */
async function stored(proposal: Proposal): Promise<boolean> {
  const control = harness.stores.control;
  const [resource, snapshot] = await Promise.all([
    control.get('proposal', '', proposal.request),
    control.loadSnapshot(PROPOSAL_ACTOR, proposal.request),
  ]);
  return resource !== null || snapshot !== null;
}

/** A tool whose input schema is about `bytes` long (each schema may be 64 KiB, row 20). */
const bulky = (name: string, bytes: number) => ({
  name,
  description: 'A tool with a long schema.',
  input_schema: { type: 'object', description: 'x'.repeat(bytes) },
  output_schema: { type: 'object' },
});

describe('retention of ended proposals', () => {
  it('deletes lapsed and granted proposals a retention period after their ten minutes', async () => {
    const lapsing = await propose(harness);
    const owner = await ownerWithOption(harness);
    const granted = await propose(harness);
    expect((await consent(harness, owner, granted.request, { inference: 'fast' })).statusCode).toBe(
      200,
    );
    const receipt = (await poll(harness, granted)).json<{ key: string }>();

    // Ended, still within the retention period: kept, answering as ended.
    clock.advance(LIFETIME_MS + RETENTION_MS / 2);
    const fresh = await propose(harness);
    await harness.services.retention.sweep();
    for (const proposal of [lapsing, granted]) {
      expect(await stored(proposal)).toBe(true);
      expect((await poll(harness, proposal)).json()).toMatchObject({ error: 'expired_token' });
    }

    // Past it: both are gone, the poll no longer knows the secret and consent no request.
    clock.advance(RETENTION_MS);
    expect(await harness.services.retention.sweep()).toBeGreaterThanOrEqual(2);
    for (const proposal of [lapsing, granted]) {
      expect(await stored(proposal)).toBe(false);
      expect((await poll(harness, proposal)).statusCode).toBe(401);
      const read = await harness.app.inject({
        method: 'GET',
        url: `/consent/${proposal.request}`,
        headers: owner.headers,
      });
      expect(read.statusCode).toBe(404);
    }
    // A proposal made later has its own ten minutes and retention, and the install stays.
    expect(await stored(fresh)).toBe(true);
    const served = await harness.app.inject({
      method: 'GET',
      url: '/appdoc',
      headers: keyHeaders(receipt.key),
    });
    expect(served.statusCode).toBe(200);
  });
});

describe('the body limit of POST /appdoc', () => {
  it('refuses a document over its own limit with 413, which an install may still propose', async () => {
    const tools = [1, 2, 3, 4, 5].map((n) => bulky(`t${n}`, 60_000));
    const doc = vendorDoc({ tools } as never);
    expect(JSON.stringify(doc).length).toBeGreaterThan(DEFAULT_APPDOC_BODY_LIMIT);
    const refused = await harness.app.inject({ method: 'POST', url: '/appdoc', payload: doc });
    expect(refused.statusCode).toBe(413);
    expect(refused.json()).toMatchObject({ code: 'payload_too_large', field: 'body' });

    // Under an install key the app-wide limit (here 1 MiB) applies to the same document.
    const owner = await ownerWithOption(harness);
    const installed = await installFor(harness, owner);
    const update = await proposeUpdate(harness, installed, doc);
    expect(update.statusCode, update.body).toBe(201);
  });
});
