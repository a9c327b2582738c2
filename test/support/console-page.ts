/**
 * The console page (`GET /console`) in headless Chromium, as its tests drive it: the real
 * service listening on loopback, its state reached through the public flow over HTTP, and a
 * browser whose pages note every script error, every URL asked and every response body
 * received, signed in with the operator token the way a user without an identity provider
 * does.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { startTestApp, type TestApp, type TestAppOptions } from './app.ts';
import { launchChromium } from './chromium.ts';
import { fetched, PublicFlow, type Owner } from './flow.ts';

/** A listening service, its public flow over HTTP, and a browser. */
export interface PageHarness {
  readonly harness: TestApp;
  readonly origin: string;
  readonly flow: PublicFlow;
  readonly browser: Browser;
  /** The operator token the service generated (the public flow signs in with it). */
  readonly operatorToken: string;
  close(): Promise<void>;
}

/**
 * Starts the service with `options` and listens on loopback: at the port of
 * `options.baseUrl` when one is named (a browser must come back there), else at any.
 */
export async function startPageHarness(options: TestAppOptions = {}): Promise<PageHarness> {
  const harness = await startTestApp(options);
  const port = options.baseUrl === undefined ? 0 : Number(new URL(options.baseUrl).port);
  const origin = await harness.app.listen({ port, host: '127.0.0.1' });
  const operatorToken = harness.keys.generatedOperatorToken ?? '';
  const flow = new PublicFlow(fetched(origin), operatorToken);
  const browser = await launchChromium();
  return {
    harness,
    origin,
    flow,
    browser,
    operatorToken,
    async close() {
      await browser.close();
      await harness.close();
    },
  };
}

/**
 * The harness of a test file: started with `options` before its tests, closed after them.
 * Its fields are read once the tests run.
 */
export function usePageHarness(options: TestAppOptions = {}): PageHarness {
  let started: PageHarness | undefined;
  beforeAll(async () => {
    started = await startPageHarness(options);
  }, 30_000);
  afterAll(() => started?.close());
  const get = (): PageHarness => {
    if (started === undefined) throw new Error('the page harness starts before the tests');
    return started;
  };
  return {
    get harness() {
      return get().harness;
    },
    get origin() {
      return get().origin;
    },
    get flow() {
      return get().flow;
    },
    get browser() {
      return get().browser;
    },
    get operatorToken() {
      return get().operatorToken;
    },
    close: () => get().close(),
  };
}

/** A console page and what it saw. */
export interface ConsolePage {
  readonly page: Page;
  /**
   * Script errors, and the console's policy violations and failed loads (refusals the page
   * shows are not problems).
   */
  readonly problems: string[];
  /** Every URL the page asked for, its WebSockets' too. */
  readonly urls: string[];
  /** The bodies of every response the page received, read as text. */
  readonly bodies: () => Promise<string[]>;
}

export interface ConsoleOptions {
  /** The viewport's width in px; 1280 by default (the height is 900). */
  readonly width?: number;
  /** Permissions granted to the page (e.g. the clipboard's). */
  readonly permissions?: string[];
  /** A script run in the page before its own. */
  readonly init?: string;
}

/** Opens `<origin>/console` in a new page of the harness's browser. */
export async function openConsole(
  h: PageHarness,
  { width = 1280, permissions = [], init = '' }: ConsoleOptions = {},
): Promise<ConsolePage> {
  const page = await h.browser.newPage({ viewport: { width, height: 900 }, permissions });
  const problems: string[] = [];
  const urls: string[] = [];
  const reads: Promise<string>[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  // The console's own: not those of another origin's pages the test passes through (a
  // provider's sign-in screens).
  const ours = () => new URL(page.url()).origin === h.origin;
  page.on('console', (message) => {
    if (message.type() === 'error' && !/status of 4\d\d/.test(message.text()) && ours()) {
      problems.push(message.text());
    }
  });
  page.on('request', (request) => urls.push(request.url()));
  page.on('websocket', (socket) => urls.push(socket.url()));
  page.on('response', (response) => {
    reads.push(response.text().catch(() => ''));
  });
  if (init !== '') await page.addInitScript({ content: init });
  await page.goto(`${h.origin}/console`);
  return { page, problems, urls, bodies: () => Promise.all(reads) };
}

/** Signs `user` in with the operator token and waits for the signed-in header. */
export async function signInWith(h: PageHarness, page: Page, user: Owner): Promise<void> {
  await page.getByRole('textbox', { name: 'Tenant' }).fill(user.tenant);
  await page.getByLabel('User').fill(user.user);
  await page.getByLabel('Operator token').fill(h.operatorToken);
  await page.getByRole('button', { name: 'Sign in with the operator token' }).click();
  await page.locator('#who').waitFor();
}

/** Signs `user` in and opens session `session`'s view, waiting for its first record. */
export async function openSessionView(
  h: PageHarness,
  page: Page,
  user: Owner,
  session: string,
): Promise<void> {
  await signInWith(h, page, user);
  await page.goto(`${h.origin}/console#/sessions/${session}`);
  await page.locator('#log .record').first().waitFor();
}

/** Nothing wider than the viewport: no sideways scrolling. */
export const scrollWidth = (page: Page) =>
  page.evaluate<number>('document.documentElement.scrollWidth');
