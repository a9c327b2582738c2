/**
 * With `CONSOLE_OIDC_ISSUER` set, an owner signs in on the consent page
 * through a real OpenID Connect provider on loopback (oidc-provider): authorization code
 * with PKCE in headless Chromium, the ID token exchanged at `POST /console/token`, then
 * consents; the vendor's poll receives its receipt. Without `OPERATOR_GRANT=on` the page
 * offers no operator token.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../src/clock.ts';
import type { TestApp } from '../support/app.ts';
import { launchChromium } from '../support/chromium.ts';
import {
  signInAtProvider,
  startOidcProvider,
  type OidcProviderPeer,
} from '../support/oidc-provider-peer.ts';
import { flowApp, ownerWithOption, poll, propose } from '../http/proposals/flow-client.ts';

const CLIENT = 'consent-page';

let idp: OidcProviderPeer;
let harness: TestApp;
let clock: ManualClock;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  idp = await startOidcProvider();
  // The operator grant stays on here only so the test can set up a tenant through the API.
  ({ harness, clock } = await flowApp({
    consoleOidc: { issuer: idp.issuer, audience: CLIENT },
    operatorGrant: true,
  }));
  origin = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  await idp.register(CLIENT, `${origin}/consent/signed-in`);
  browser = await launchChromium();
}, 30_000);
afterAll(async () => {
  await browser.close();
  await harness.close();
  await idp.close();
});

/** A page that fails the test on any script error or policy violation of the service's. */
async function openPage(
  url: string,
): Promise<{ page: Page; problems: string[]; requested: URL[]; ours: URL[] }> {
  const page = await browser.newPage();
  const problems: string[] = [];
  const requested: URL[] = [];
  // What the service's pages asked for (the provider's own screens load what they like).
  const ours: URL[] = [];
  page.on('request', (request) => {
    requested.push(new URL(request.url()));
    if (request.frame().url().startsWith(origin)) ours.push(new URL(request.url()));
  });
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    const from = message.location().url;
    if (
      message.type() === 'error' &&
      from.startsWith(origin) &&
      !/status of 4\d\d/.test(message.text())
    ) {
      problems.push(message.text());
    }
  });
  await page.goto(url);
  return { page, problems, requested, ours };
}

describe('the consent page with an OpenID Connect provider', () => {
  it('signs an owner in through the provider with PKCE, shows who, and consents', async () => {
    const owner = await ownerWithOption(harness);
    const proposal = await propose(harness);
    const { page, problems, requested, ours } = await openPage(
      `${origin}/consent/${proposal.request}`,
    );

    await page.getByLabel('Tenant').fill(owner.tenant);
    await page.getByRole('button', { name: 'Sign in with your identity provider' }).click();
    await signInAtProvider(page, owner.user);

    // Back on the consent page of the request, signed in as the provider's subject.
    await page.locator('#who').waitFor();
    expect(new URL(page.url()).pathname).toBe(`/consent/${proposal.request}`);
    expect(page.url()).not.toContain('code=');
    expect(await page.locator('#who-user').textContent()).toBe(owner.user);
    expect(await page.locator('#who-tenant').textContent()).toBe(owner.tenant);
    expect(await page.locator('#who-role').textContent()).toBe('owner');

    await page.locator('#inference').selectOption('fast');
    await page.getByRole('button', { name: 'Consent' }).click();
    await page.getByRole('heading', { name: 'Consented' }).waitFor();
    clock.advance(5000);
    const receipt = await poll(harness, proposal);
    expect(receipt.statusCode, receipt.body).toBe(200);
    expect(problems).toEqual([]);
    await page.close();

    // The provider was asked for a code with PKCE (S256), for the page's fixed way back,
    // and oauth4webapi came from this service, not from elsewhere.
    const authorize = requested.find(
      (url) => url.origin === idp.issuer && url.pathname === '/auth',
    );
    const asked = Object.fromEntries(authorize?.searchParams ?? []);
    expect(asked).toMatchObject({
      client_id: CLIENT,
      response_type: 'code',
      code_challenge_method: 'S256',
      redirect_uri: `${origin}/consent/signed-in`,
      scope: 'openid',
    });
    expect(asked.code_challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(requested.map((url) => url.href)).toContain(`${origin}/consent/oauth4webapi.js`);
    expect(ours.filter((url) => url.origin !== origin && url.origin !== idp.issuer)).toEqual([]);
  }, 60_000);

  it('offers no operator token when the operator grant is off', async () => {
    const plain = await flowApp({ consoleOidc: { issuer: idp.issuer, audience: CLIENT } });
    try {
      const address = await plain.harness.app.listen({ port: 0, host: '127.0.0.1' });
      const proposal = await propose(plain.harness);
      const page = await browser.newPage();
      await page.goto(`${address}/consent/${proposal.request}`);
      await page.getByRole('button', { name: 'Sign in with your identity provider' }).waitFor();
      expect(await page.getByLabel('Operator token').isVisible()).toBe(false);
      await page.close();
    } finally {
      await plain.harness.close();
    }
  }, 30_000);
});
