/**
 * The owner's calls of the client (what the consent page makes through it): sign in with
 * the operator grant, read a proposal, consent or decline, each refusal a
 * `ServiceProblem`; the vendor's wait then ends with the receipt or `access_denied`.
 */
import { createClient, ServiceProblem } from '@agent-session-service/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Owner } from '../support/flow.ts';
import { appDocument, startClientHarness, type ClientHarness } from './harness.ts';

let h: ClientHarness;
let owner: Owner;
beforeAll(async () => {
  h = await startClientHarness();
  owner = await h.flow.owner();
  await h.flow.option(owner, 'default');
});
afterAll(async () => {
  await h.close();
});

/** A client signed in as a fresh `user` of the owner's tenant through the operator grant. */
async function signedIn(user = owner.user) {
  const anonymous = createClient({ baseUrl: h.base });
  const operator = h.harness.keys.generatedOperatorToken ?? '';
  const { token } = await anonymous.signIn({ user, tenant: owner.tenant }, operator);
  return anonymous.with({ consoleToken: token });
}

describe("the client's owner calls", () => {
  it('reads a proposal and consents to it; the vendor receives its key', async () => {
    const vendor = createClient({ baseUrl: h.base });
    const proposal = await vendor.propose(appDocument('Owner calls'));
    const client = await signedIn();
    const read = await client.readProposal(proposal.request);
    expect(read).toMatchObject({
      request: proposal.request,
      state: 'pending',
      vendor: { name: 'Owner calls' },
    });
    const { install } = await client.consent(proposal.request, { inference: 'default' });
    const receipt = await vendor.waitForConsent(proposal, { sleep: () => Promise.resolve() });
    expect(receipt.install).toBe(install);
    // Consenting again is refused, naming the install.
    const again = await client
      .consent(proposal.request, { inference: 'default' })
      .catch((e: unknown) => e);
    expect(again).toBeInstanceOf(ServiceProblem);
    expect(again).toMatchObject({ status: 409, code: 'already_granted', body: { install } });
  });

  it('declines a proposal; the vendor is answered access_denied', async () => {
    const vendor = createClient({ baseUrl: h.base });
    const proposal = await vendor.propose(appDocument());
    const client = await signedIn();
    await client.decline(proposal.request);
    expect((await client.readProposal(proposal.request)).state).toBe('declined');
    const wait = vendor.waitForConsent(proposal, { sleep: () => Promise.resolve() });
    await expect(wait).rejects.toMatchObject({ code: 'access_denied' });
  });

  it('refuses a sign-in with a wrong operator token, and a consent field by name', async () => {
    const anonymous = createClient({ baseUrl: h.base });
    const refused = await anonymous
      .signIn({ user: owner.user, tenant: owner.tenant }, 'op_wrong')
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 401 });
    const proposal = await anonymous.propose(appDocument());
    const client = await signedIn();
    const wrong = await client
      .consent(proposal.request, { inference: 'no-such-option' })
      .catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(ServiceProblem);
    expect(wrong).toMatchObject({ status: 400, field: 'body.inference' });
  });
});
