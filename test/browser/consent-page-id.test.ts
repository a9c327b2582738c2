/**
 * The consent page checks the request id in its address before it
 * fetches anything. A crafted link whose last segment decodes to another path
 * (`..%2Finstalls%2F…%2Fkey`) would otherwise steer the page's calls, which carry the
 * owner's token, to another route. Headless Chromium records every request the page makes.
 */
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app.ts';
import { flowApp, ownerWithOption, propose } from '../http/proposals/flow-client.ts';

let harness: TestApp;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  ({ harness } = await flowApp());
  origin = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await launchChromium();
}, 30_000);
afterAll(async () => {
  await browser.close();
  await harness.close();
});

/** Opens `path` with the owner's token in the fragment; answers every URL it requested. */
async function refusedPage(path: string, token: string) {
  const page = await browser.newPage();
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  await page.goto(`${origin}${path}#token=${token}`);
  await page.getByText('names no consent request').waitFor();
  const address = page.url();
  await page.close();
  return { requested, address };
}

describe('the consent page with an address that names no request', () => {
  it.each([
    ['a path that climbs out', '/consent/..%2Finstalls%2Fin_x%2Fkey'],
    ['another route', '/consent/..%2Finferences'],
    ['an id of the wrong shape', '/consent/rq_NOT-HEX'],
  ])('fetches nothing for %s and says why', async (_, path) => {
    const owner = await ownerWithOption(harness);
    const seen = await refusedPage(path, owner.token);
    // The page itself and nothing else: no call went out with the token.
    expect(seen.requested).toEqual([`${origin}${path}`]);
    // The token handed over in the fragment does not stay in the address.
    expect(seen.address).not.toContain(owner.token);
  });

  it('still reads a real request', async () => {
    const owner = await ownerWithOption(harness);
    const proposal = await propose(harness);
    const page = await browser.newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(new URL(request.url()).pathname));
    await page.goto(`${origin}/consent/${proposal.request}#token=${owner.token}`);
    await page.locator('#vendor-name').waitFor();
    expect(requested).toContain(`/consent/${proposal.request}`);
    expect(requested).toContain('/inferences');
    // Its calls go through the typed client package, served from this origin as modules.
    expect(requested).toEqual(
      expect.arrayContaining([
        '/consent/client/index.ts',
        '/consent/client/owner.ts',
        '/consent/client/openapi-fetch.js',
      ]),
    );
    await page.close();
  });
});
