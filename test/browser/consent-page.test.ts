/**
 * The consent page in headless Chromium on the embedded
 * default. An owner signs in with the operator token, sees who and for which tenant they
 * consent, reads what the vendor asks for, fills the form, meets an inline error, fixes it
 * and consents; the vendor's poll then receives its receipt. Another owner declines, and
 * the vendor's poll answers `access_denied`.
 */
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../src/clock.ts';
import type { TestApp } from '../support/app.ts';
import type { ConsoleUser } from '../support/console.ts';
import type { PagingServer } from '../mcp/peers/paging.ts';
import {
  flowApp,
  keyHeaders,
  linkConnection,
  ownerWithOption,
  poll,
  propose,
  startToolServer,
  vendorDoc,
} from '../http/proposals/flow-client.ts';

let harness: TestApp;
let clock: ManualClock;
let origin: string;
let browser: Browser;
let server: PagingServer;

beforeAll(async () => {
  ({ harness, clock } = await flowApp());
  origin = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  server = await startToolServer();
  browser = await launchChromium();
}, 30_000);
afterAll(async () => {
  await browser.close();
  await server.close();
  await harness.close();
});

/** A page that fails the test on any script error or policy violation. */
async function openPage(url: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) {
      problems.push(message.text());
    }
  });
  await page.goto(url);
  return { page, problems };
}

/** Signs `owner` in on the page through the operator grant, as the page offers it. */
async function signInAsOperator(page: Page, owner: ConsoleUser): Promise<void> {
  const operator = harness.keys.generatedOperatorToken ?? '';
  await page.getByLabel('Tenant').fill(owner.tenant);
  await page.getByLabel('User').fill(owner.user);
  await page.getByLabel('Operator token').fill(operator);
  await page.getByRole('button', { name: 'Sign in with the operator token' }).click();
}

/** The page address of a proposal on the listening server (`consent_url` names `baseUrl`). */
const pageOf = (consentUrl: string) => `${origin}${new URL(consentUrl).pathname}`;

describe('the consent page', () => {
  it('signs in, shows the proposal, shows an error inline, then consents; the poll gets its receipt', async () => {
    const owner = await ownerWithOption(harness);
    await linkConnection(harness, owner, 'files', server.endpoint);
    const doc = vendorDoc();
    const proposal = await propose(harness, doc);
    const { page, problems } = await openPage(pageOf(proposal.consent_url));

    // Sign in with the operator token: no identity provider is configured.
    expect(await page.getByRole('button', { name: /identity provider/ }).isVisible()).toBe(false);
    await signInAsOperator(page, owner);
    await page.getByRole('heading', { name: String(doc.name) }).waitFor();
    // Who consents, for which tenant, in which role.
    await page.locator('#who').waitFor();
    expect(await page.locator('#who-user').textContent()).toBe(owner.user);
    expect(await page.locator('#who-tenant').textContent()).toBe(owner.tenant);
    expect(await page.locator('#who-role').textContent()).toBe('owner');
    expect(await page.locator('#vendor-description').textContent()).toBe(doc.description);
    expect(await page.locator('.tool h4').allTextContents()).toEqual(['search', 'send_mail']);
    await page.locator('.tool details').first().click();
    expect(await page.locator('.tool pre').first().textContent()).toContain('"query"');

    // Fill the form: the option, an extra tool, a rule on an argument the tool lacks.
    await page.locator('#inference').selectOption('fast');
    await page.getByRole('checkbox', { name: 'files__read_file', exact: true }).check();
    await page.locator('fieldset[data-tool="files__read_file"]').waitFor();
    const sendMail = page.locator('fieldset[data-tool="send_mail"]');
    await sendMail.getByRole('button', { name: 'Add rule' }).click();
    await page.getByLabel('send_mail rule 1 argument').fill('recipient');
    await page.getByLabel('send_mail rule 1 op').selectOption('is');
    await page.getByLabel('send_mail rule 1 value').fill('"boss@example.com"');
    await page.getByRole('button', { name: 'Consent' }).click();

    // The refusal shows beside the argument, in the rule's row.
    const error = sendMail.locator('.item [data-error-for="body.policies.0.items.0.arg"]');
    await error.waitFor();
    expect(await error.textContent()).toContain('names no property');
    expect(await sendMail.locator('.item').getAttribute('aria-invalid')).toBe('true');
    expect((await poll(harness, proposal)).json()).toMatchObject({
      error: 'authorization_pending',
    });

    // Fix it and consent.
    await page.getByLabel('send_mail rule 1 argument').fill('to');
    await page.getByRole('button', { name: 'Consent' }).click();
    await page.getByRole('heading', { name: 'Consented' }).waitFor();
    expect(await error.count()).toBe(0);
    const done = (await page.locator('#done-text').textContent()) ?? '';
    const install = /Install (in_[0-9a-f]+)/.exec(done)?.[1];
    expect(install).toBeDefined();

    // The vendor's poll receives the receipt, and the key runs the consented document.
    clock.advance(5000);
    const receipt = await poll(harness, proposal);
    expect(receipt.statusCode).toBe(200);
    const { key } = receipt.json<{ key: string; install: string }>();
    expect(receipt.json()).toMatchObject({ install });
    const appdoc = await harness.app.inject({
      method: 'GET',
      url: '/appdoc',
      headers: keyHeaders(key),
    });
    expect(appdoc.json()).toMatchObject({
      tenant: {
        inference: 'fast',
        extra_tools: [{ connection: 'files', tool: 'read_file' }],
        policies: [
          {
            tool: 'send_mail',
            items: [
              { arg: 'to', effect: 'deny', op: 'is', operand: { value: 'boss@example.com' } },
            ],
          },
        ],
      },
    });
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);

  it('takes the token from the fragment and drops it from the address', async () => {
    const owner = await ownerWithOption(harness);
    const proposal = await propose(harness);
    const { page, problems } = await openPage(
      `${pageOf(proposal.consent_url)}#token=${owner.token}`,
    );
    await page.getByRole('button', { name: 'Consent' }).waitFor();
    expect(page.url()).toBe(pageOf(proposal.consent_url));
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);

  it('declines; the vendor is answered access_denied and nothing is installed', async () => {
    const owner = await ownerWithOption(harness);
    const proposal = await propose(harness);
    const { page, problems } = await openPage(pageOf(proposal.consent_url));
    await signInAsOperator(page, owner);
    await page.getByRole('button', { name: 'Decline' }).click();
    await page.getByRole('heading', { name: 'Declined' }).waitFor();
    clock.advance(5000);
    const answer = await poll(harness, proposal);
    expect(answer.statusCode).toBe(400);
    expect(answer.json()).toMatchObject({ error: 'access_denied' });
    const installs = await harness.app.inject({
      method: 'GET',
      url: '/installs',
      headers: owner.headers,
    });
    expect(installs.json()).toMatchObject({ items: [] });
    // Opened again, the page says so instead of offering the form.
    await page.reload();
    await page.getByText('This request was declined already').waitFor();
    expect(await page.locator('#consent').isHidden()).toBe(true);
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);

  it('refuses a sign-in with a wrong operator token beside the form', async () => {
    const owner = await ownerWithOption(harness);
    const proposal = await propose(harness);
    const { page } = await openPage(pageOf(proposal.consent_url));
    await page.getByLabel('Tenant').fill(owner.tenant);
    await page.getByLabel('User').fill(owner.user);
    await page.getByLabel('Operator token').fill('op_wrong');
    await page.getByRole('button', { name: 'Sign in with the operator token' }).click();
    await page.getByText('Sign-in failed: the operator token does not match').waitFor();
    expect(await page.locator('#proposal').isHidden()).toBe(true);
    await page.close();
  }, 30_000);

  it('asks to sign in again when the token does not verify, and says when a request is gone', async () => {
    const owner = await ownerWithOption(harness);
    const proposal = await propose(harness);
    const { page } = await openPage(`${pageOf(proposal.consent_url)}#token=not-a-token`);
    await page.getByText('That token does not verify.').waitFor();
    clock.advance(600_000);
    await signInAsOperator(page, owner);
    await page.getByText('no such request, or it lapsed').waitFor();
    expect(await page.locator('#consent').isHidden()).toBe(true);
    await page.close();
  }, 30_000);
});
