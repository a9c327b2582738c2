/**
 * The whole vendor flow as a vendor and an owner do it, over HTTP
 * only, against the real app and stores.
 */
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { ManualClock } from '../../../src/clock.ts';
import type { TestApp } from '../../support/app.ts';
import {
  consent,
  flowApp,
  keyHeaders,
  ownerWithOption,
  poll,
  propose,
  linkConnection,
  startToolServer,
  vendorDoc,
  proposeUpdate,
} from './flow-client.ts';

let harness: TestApp;
let clock: ManualClock;

beforeAll(async () => {
  ({ harness, clock } = await flowApp());
});
afterAll(async () => {
  await harness.close();
});

describe('the vendor flow end to end', () => {
  it('proposes, polls, consents, serves the document, updates, replaces consent and rotates the key', async () => {
    const owner = await ownerWithOption(harness);
    const server = await startToolServer();
    onTestFinished(() => server.close());
    await linkConnection(harness, owner, 'files', server.endpoint);
    const doc = vendorDoc();

    // Propose: 2.8.
    const proposal = await propose(harness, doc);
    expect(proposal.request).toMatch(/^rq_[0-9a-f]{32}$/);
    expect(proposal.poll_secret).toMatch(/^ps_[A-Za-z0-9_-]{43}$/);
    expect(proposal.consent_url).toBe(`${harness.deps.baseUrl}/consent/${proposal.request}`);
    expect(proposal.vendor).toMatch(/^[0-9a-f]{64}$/);
    expect(proposal.expires).toBe(clock.now() + 600_000);
    expect(proposal.interval).toBe(5000);

    // Poll pending (row 30).
    const pending = await poll(harness, proposal);
    expect(pending.statusCode).toBe(400);
    expect(pending.json()).toMatchObject({
      code: 'authorization_pending',
      error: 'authorization_pending',
    });

    // Consent: the owner reads the proposal, then consents with an extra tool and a policy.
    const read = await harness.app.inject({
      method: 'GET',
      url: `/consent/${proposal.request}`,
      headers: owner.headers,
    });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toMatchObject({
      request: proposal.request,
      state: 'pending',
      install: null,
    });
    const config = {
      inference: 'fast',
      extra_tools: [{ connection: 'files', tool: 'read_file' }],
      policies: [
        {
          tool: 'send_mail',
          items: [{ arg: 'to', effect: 'deny', op: 'is', operand: { value: 'boss@example.com' } }],
        },
        { tool: 'files__read_file', posture: 'restrictive', items: [] },
      ],
    };
    const granted = await consent(harness, owner, proposal.request, config);
    expect(granted.statusCode, granted.body).toBe(200);
    const { install } = granted.json<{ install: string }>();

    // Poll the receipt, with the key; the same receipt on the next poll.
    clock.advance(5000);
    const receipt = await poll(harness, proposal);
    expect(receipt.statusCode, receipt.body).toBe(200);
    const { key } = receipt.json<{ key: string }>();
    expect(receipt.json()).toEqual({
      request: proposal.request,
      install,
      key: expect.stringMatching(/^ik_[A-Za-z0-9_-]{43}$/) as string,
      vendor: proposal.vendor,
    });
    expect((await poll(harness, proposal)).json()).toEqual(receipt.json());

    // GET /appdoc with the key: the composed document (2.7, row 28).
    const appdoc = await harness.app.inject({
      method: 'GET',
      url: '/appdoc',
      headers: keyHeaders(key),
    });
    expect(appdoc.statusCode, appdoc.body).toBe(200);
    const composed = appdoc.json<Record<string, unknown>>();
    expect(composed).toMatchObject({
      install: { id: install, tenant: owner.tenant, vendor: proposal.vendor },
      tenant: { inference: 'fast', extra_tools: config.extra_tools },
      vendor: { appdoc: 1, name: doc.name },
    });

    // Update proposal: the key names the install; consent again keeps install and key.
    const updated = vendorDoc({ name: 'Mailer v2', description: 'Now with drafts.' });
    const update = await proposeUpdate(harness, { install, key }, updated);
    expect(update.statusCode, update.body).toBe(201);
    const second = update.json<{ request: string; poll_secret: string; vendor: string }>();
    expect(second.request).not.toBe(proposal.request);
    const readUpdate = await harness.app.inject({
      method: 'GET',
      url: `/consent/${second.request}`,
      headers: owner.headers,
    });
    expect(readUpdate.json()).toMatchObject({ state: 'pending', install });
    const again = await consent(harness, owner, second.request, { inference: 'fast' });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toEqual({ install });
    const updateReceipt = await poll(harness, second);
    expect(updateReceipt.json()).toEqual({
      request: second.request,
      install,
      key: null,
      vendor: second.vendor,
    });
    const afterUpdate = await harness.app.inject({
      method: 'GET',
      url: '/appdoc',
      headers: keyHeaders(key),
    });
    expect(afterUpdate.statusCode).toBe(200);
    expect(afterUpdate.json()).toMatchObject({
      install: { id: install, vendor: second.vendor },
      tenant: { inference: 'fast', extra_tools: [], policies: [] },
      vendor: { name: 'Mailer v2' },
    });

    // PUT /installs/{id}: the owner replaces the consent; the vendor config is unchanged.
    const put = await harness.app.inject({
      method: 'PUT',
      url: `/installs/${install}`,
      headers: owner.headers,
      payload: { inference: 'fast', policies: [{ tool: 'search', allow: false }] },
    });
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({
      install: { id: install, vendor: second.vendor },
      tenant: { policies: [{ tool: 'search', allow: false, posture: 'permissive' }] },
      vendor: { name: 'Mailer v2' },
    });

    // Rotate the key: the new one is shown once and answers; the old one is refused.
    const rotated = await harness.app.inject({
      method: 'POST',
      url: `/installs/${install}/key`,
      headers: owner.headers,
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const fresh = rotated.json<{ key: string }>().key;
    expect(fresh).not.toBe(key);
    const old = await harness.app.inject({
      method: 'GET',
      url: '/appdoc',
      headers: keyHeaders(key),
    });
    expect(old.statusCode).toBe(401);
    expect(old.json()).toMatchObject({ code: 'invalid_token' });
    const withFresh = await harness.app.inject({
      method: 'GET',
      url: '/appdoc',
      headers: keyHeaders(fresh),
    });
    expect(withFresh.statusCode).toBe(200);
    expect(withFresh.json()).toMatchObject({
      tenant: { policies: [{ tool: 'search', allow: false }] },
    });
  });
});
