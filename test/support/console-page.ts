/**
 * The console page (`GET /console`) in headless Chromium, as the resource pages' tests
 * drive it: a page that notes every script error, every URL asked and every response body
 * it received, signed in with the operator token the way a user without an identity
 * provider does.
 */
import type { Browser, Page } from 'playwright-core';
import type { Owner } from './flow.ts';

/** A console page and what it saw. */
export interface ConsolePage {
  readonly page: Page;
  /** Script errors and policy violations (refusals the page shows are not problems). */
  readonly problems: string[];
  /** Every URL the page asked for. */
  readonly urls: string[];
  /** The bodies of every response the page received, read as text. */
  readonly bodies: () => Promise<string[]>;
}

/** Opens `<origin>/console` at `width` px, granted `permissions` (e.g. the clipboard's). */
export async function openConsole(
  browser: Browser,
  origin: string,
  width = 1280,
  permissions: string[] = [],
): Promise<ConsolePage> {
  const page = await browser.newPage({ viewport: { width, height: 900 }, permissions });
  const problems: string[] = [];
  const urls: string[] = [];
  const reads: Promise<string>[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text())) {
      problems.push(message.text());
    }
  });
  page.on('request', (request) => urls.push(request.url()));
  page.on('response', (response) => {
    reads.push(response.text().catch(() => ''));
  });
  await page.goto(`${origin}/console`);
  return { page, problems, urls, bodies: () => Promise.all(reads) };
}

/** Signs `user` in with the operator token and waits for the signed-in header. */
export async function signInWith(page: Page, user: Owner, operatorToken: string): Promise<void> {
  await page.getByRole('textbox', { name: 'Tenant' }).fill(user.tenant);
  await page.getByLabel('User').fill(user.user);
  await page.getByLabel('Operator token').fill(operatorToken);
  await page.getByRole('button', { name: 'Sign in with the operator token' }).click();
  await page.locator('#who').waitFor();
}

/** Nothing wider than the viewport: no sideways scrolling. */
export const scrollWidth = (page: Page) =>
  page.evaluate<number>('document.documentElement.scrollWidth');
