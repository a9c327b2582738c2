/**
 * `GET /docs` serves its reference page with no third-party fonts,
 * telemetry or cloud buttons, under a Content-Security-Policy. Headless Chromium loads the
 * page and records every request it makes and every policy violation it reports: the
 * honest check that nothing leaves this origin.
 */
import type { Browser } from 'playwright-core';
import { launchChromium } from '../support/chromium.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.ts';

let harness: TestApp;
let origin: string;
let browser: Browser;

beforeAll(async () => {
  harness = await startTestApp();
  origin = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  browser = await launchChromium();
}, 30_000);
afterAll(async () => {
  await browser.close();
  await harness.close();
});

describe('the API reference page', () => {
  it('renders the document while every request stays on this origin and nothing breaks the policy', async () => {
    const page = await browser.newPage();
    const requested: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) {
        problems.push(message.text());
      }
    });
    page.on('pageerror', (error) => problems.push(error.message));
    await page.addInitScript(() => {
      (globalThis as unknown as EventTarget).addEventListener(
        'securitypolicyviolation',
        (event) => {
          const { violatedDirective, blockedURI } = event as Event & {
            violatedDirective: string;
            blockedURI: string;
          };
          // The bundled zod probes `Function('')` once to choose its JIT and falls back
          // without it: that probe is the one refusal the page is expected to meet.
          if (violatedDirective === 'script-src' && blockedURI === 'eval') return;
          console.error(`CSP violation: ${violatedDirective} ${blockedURI}`);
        },
      );
    });
    const answer = await page.goto(`${origin}/docs`);
    expect(answer?.headers()['content-security-policy']).toContain("default-src 'none'");
    await page
      .getByText('Agent Session Service', { exact: false })
      .first()
      .waitFor({ timeout: 20_000 });
    await page.getByText('/health', { exact: false }).first().waitFor({ timeout: 20_000 });
    // Give late requests (fonts, telemetry, lazy chunks) their chance to show.
    await page.waitForTimeout(1_500);
    const elsewhere = requested.filter(
      (url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'),
    );
    // Every link stays here too: no way into Scalar's cloud, not even an attribution.
    const links = await page
      .locator('a[href]:visible')
      .evaluateAll((anchors) =>
        anchors.map((anchor) => (anchor as unknown as { href: string }).href),
      );
    expect(links.length).toBeGreaterThan(0);
    expect(links.filter((href) => !href.startsWith(`${origin}/`))).toEqual([]);
    expect(elsewhere).toEqual([]);
    expect(problems).toEqual([]);
    // No button into Scalar's cloud.
    expect(await page.getByText('Open API Client').count()).toBe(0);
    expect(await page.getByText(/Ask AI|Generate MCP/i).count()).toBe(0);
    await page.close();
  }, 60_000);
});
