/**
 * With `CONSOLE_OIDC_ISSUER` set, a user signs in on the console through a real OpenID
 * Connect provider on loopback (oidc-provider): authorization code with PKCE in headless
 * Chromium with the consent page's shared sign-in, the console itself as the redirect URI,
 * the ID token exchanged at `POST /console/token`; then another of the user's tenants is
 * opened from the same ID token, kept in memory, with no second sign-in.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openConsole, startPageHarness, type PageHarness } from '../support/console-page.ts';
import {
  signInAtProvider,
  startOidcProvider,
  type OidcProviderPeer,
} from '../support/oidc-provider-peer.ts';

const CLIENT = 'console-page';

/** In the page: the tenant (`tid`) of the console token the tab holds. */
const TOKEN_TENANT = `JSON.parse(
  atob(sessionStorage.getItem('consoleToken').split('.')[1].replaceAll('-', '+').replaceAll('_', '/')),
).tid`;

let idp: OidcProviderPeer;
let h: PageHarness;

beforeAll(async () => {
  idp = await startOidcProvider();
  // The operator grant stays on here only so the test can set up tenants through the API.
  h = await startPageHarness({
    consoleOidc: { issuer: idp.issuer, audience: CLIENT },
    operatorGrant: true,
  });
  await idp.register(CLIENT, `${h.origin}/console`);
}, 30_000);
afterAll(async () => {
  await h.close();
  await idp.close();
});

describe('the console with an OpenID Connect provider', () => {
  it('signs a user in through the provider with PKCE and opens another of their tenants', async () => {
    const { flow } = h;
    const owner = await flow.owner();
    // A second tenant the same user owns.
    const other = await flow.signIn(owner.user, `t-${randomUUID().slice(0, 8)}`);
    await flow.expect(201, 'PUT', '/console/tenant', other.token, { name: 'Other' });

    const { page, problems, urls } = await openConsole(h);
    const requested = () => urls.map((url) => new URL(url));
    await page.getByRole('textbox', { name: 'Tenant' }).fill(owner.tenant);
    await page.getByRole('button', { name: 'Sign in with your identity provider' }).click();
    await signInAtProvider(page, owner.user);

    // Back on the console, signed in as the provider's subject, no code left in the address.
    await page.locator('#who').waitFor();
    expect(new URL(page.url()).pathname).toBe('/console');
    expect(page.url()).not.toContain('code=');
    expect(await page.locator('#who-user').textContent()).toBe(owner.user);
    expect(await page.locator('#who-role').textContent()).toBe('owner');
    await page.locator('#directory').waitFor();
    expect(await page.locator('#tenant-select option').allTextContents()).toEqual(
      expect.arrayContaining([`${owner.tenant} (owner)`, `${other.tenant} (owner)`]),
    );

    // Another tenant, from the ID token kept in memory: no second trip to the provider.
    const authorizations = () =>
      requested().filter((url) => url.origin === idp.issuer && url.pathname === '/auth').length;
    expect(authorizations()).toBe(1);
    await page.locator('#tenant-select').selectOption(other.tenant);
    await expect.poll(() => page.locator('#tenant-select').inputValue()).toBe(other.tenant);
    await expect.poll(() => page.evaluate<string>(TOKEN_TENANT)).toBe(other.tenant);
    expect(authorizations()).toBe(1);

    const authorize = requested().find(
      (url) => url.origin === idp.issuer && url.pathname === '/auth',
    );
    expect(Object.fromEntries(authorize?.searchParams ?? [])).toMatchObject({
      client_id: CLIENT,
      redirect_uri: `${h.origin}/console`,
      code_challenge_method: 'S256',
    });
    expect(requested().map((url) => url.href)).toContain(`${h.origin}/console/oauth4webapi.js`);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
