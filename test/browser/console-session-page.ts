/**
 * What the session view's page tests share: the real service listening on loopback, its
 * state reached through the public flow, and headless Chromium on `GET /console` signed in
 * with the operator token, failing the test on any script error or policy violation.
 */
import type { Browser, Page } from 'playwright-core';
import { startTestApp, type TestApp } from '../support/app.ts';
import { launchChromium } from '../support/chromium.ts';
import { fetched, PublicFlow, type Owner } from '../support/flow.ts';

/** A listening service, its public flow over HTTP, and a browser. */
export interface PageHarness {
  readonly harness: TestApp;
  readonly origin: string;
  readonly flow: PublicFlow;
  readonly browser: Browser;
  close(): Promise<void>;
}

export async function startPageHarness(): Promise<PageHarness> {
  const harness = await startTestApp();
  const origin = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  const flow = new PublicFlow(fetched(origin), harness.keys.generatedOperatorToken ?? '');
  const browser = await launchChromium();
  return {
    harness,
    origin,
    flow,
    browser,
    async close() {
      await browser.close();
      await harness.close();
    },
  };
}

/** A console page; `problems` collects script errors. `init` runs before the page's scripts. */
export async function openConsole(
  h: PageHarness,
  init = '',
  width = 1280,
): Promise<{ page: Page; problems: string[] }> {
  const page = await h.browser.newPage({ viewport: { width, height: 900 } });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) {
      problems.push(message.text());
    }
  });
  if (init !== '') await page.addInitScript({ content: init });
  await page.goto(`${h.origin}/console`);
  return { page, problems };
}

/** Signs `user` in with the operator token and opens session `session`'s view. */
export async function openSessionView(
  h: PageHarness,
  page: Page,
  user: Owner,
  session: string,
): Promise<void> {
  await page.getByRole('textbox', { name: 'Tenant' }).fill(user.tenant);
  await page.getByLabel('User').fill(user.user);
  await page.getByLabel('Operator token').fill(h.harness.keys.generatedOperatorToken ?? '');
  await page.getByRole('button', { name: 'Sign in with the operator token' }).click();
  await page.locator('#who').waitFor();
  await page.goto(`${h.origin}/console#/sessions/${session}`);
  await page.locator('#log .record').first().waitFor();
}
