/**
 * The console (`GET /console`) in headless Chromium against the real service, its state
 * reached through the public flow: an owner signs in with the operator token, finds a
 * session in the directory, sends a message from the page and sees the turn's records
 * land within a second while the turn chart goes inferring then idle; a dropped WebSocket
 * resumes with no gap and no repeat; a member sees no owner controls.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { turnMachine } from '../../src/machines/turn.machine.ts';
import { renderSvg } from '../../scripts/statecharts/svg.ts';
import { walkMachine } from '../../scripts/statecharts/walk.ts';
import { setMembers } from '../support/console.ts';
import { openConsole, scrollWidth, signInWith, usePageHarness } from '../support/console-page.ts';
import type { TestInstall } from '../support/flow.ts';

const h = usePageHarness();

/*
 * Scripts run in the page, as text: the tests' TypeScript has no DOM types.
 */

/** Keeps every WebSocket the page opens in `window.sockets`, for the test to cut. */
const KEEP_SOCKETS = `{
  const Native = window.WebSocket;
  const sockets = [];
  window.sockets = sockets;
  window.WebSocket = class extends Native {
    constructor(url, protocols) {
      super(url, protocols);
      sockets.push(this);
    }
  };
}`;

/** Notes, by cursor, when each record reaches the page's log (the page's clock). */
const WATCH_ARRIVALS = `{
  window.seen = {};
  new MutationObserver((changes) => {
    for (const change of changes)
      for (const node of change.addedNodes)
        if (node.dataset) window.seen[node.dataset.cursor] = Date.now();
  }).observe(document.getElementById('log'), { childList: true });
}`;

/** Each record watched arriving: how long after it landed (its \`at\`) it showed, in ms. */
const ARRIVALS = `[...document.querySelectorAll('#log .record')]
  .filter((item) => window.seen[item.dataset.cursor] !== undefined)
  .map((item) => ({
    cursor: item.dataset.cursor,
    after: window.seen[item.dataset.cursor] - Date.parse(item.querySelector('time').dateTime),
  }))`;

interface Opened {
  readonly session: string;
  readonly token: string;
}

/** An install and a session it opened for `principal`, through the public flow. */
async function openSession(
  principal = 'alice',
  existing?: TestInstall,
): Promise<{ install: TestInstall } & Opened> {
  const install = existing ?? (await h.flow.install());
  const opened = (await h.flow.expect(
    201,
    'POST',
    `/sessions?principal=${principal}`,
    install.key,
    {},
  )) as Opened;
  return { install, ...opened };
}

/** The cursors on the page's log, in order. */
const cursorsOn = (page: Page) =>
  page.evaluate<number[]>(
    "[...document.querySelectorAll('#log .record')].map((item) => Number(item.dataset.cursor))",
  );

/** Every public cursor of the session up to its head, read over the NDJSON tail. */
async function cursorsOf(opened: Opened): Promise<number[]> {
  const auth = { authorization: `Bearer ${opened.token}` };
  const status = await fetch(`${h.origin}/sessions/${opened.session}/status`, { headers: auth });
  const { head } = (await status.json()) as { head: number };
  const tail = await fetch(`${h.origin}/sessions/${opened.session}/events?from=0&to=${head + 1}`, {
    headers: auth,
  });
  const lines = (await tail.text()).split('\n').filter((line) => line !== '');
  return lines
    .map((line) => (JSON.parse(line) as { Ok: { envelope: { cursor: number } } }).Ok)
    .map((record) => record.envelope.cursor);
}

async function appendMessage(opened: Opened, text: string): Promise<void> {
  await h.flow.expect(200, 'POST', `/sessions/${opened.session}/events`, opened.token, [
    { kind: { name: 'message.submitted', version: 1 }, body: { text } },
  ]);
}

describe('the console', () => {
  it('serves the turn chart the statechart generator draws, byte for byte', async () => {
    const response = await fetch(`${h.origin}/console/statecharts/turn`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await response.text()).toBe(await renderSvg(walkMachine(turnMachine)));
    expect((await fetch(`${h.origin}/console/statecharts/nope`)).status).toBe(400);
  });

  it('signs in, finds the session, sends a message whose turn lands live as the chart moves', async () => {
    const opened = await openSession('alice');
    const { install } = opened;
    await openSession('alice'); // another tenant's: never listed
    const { page, problems, urls } = await openConsole(h, { init: KEEP_SOCKETS });
    expect(await page.getByRole('button', { name: /identity provider/ }).isVisible()).toBe(false);
    await signInWith(h, page, install.owner);
    expect(await page.locator('#who-role').textContent()).toBe('owner');

    // The directory, live: a session opened while it is shown appears without a reload.
    const row = page.locator(`#sessions tr[data-session="${opened.session}"]`);
    await row.waitFor();
    expect(await page.locator('#sessions tbody tr').count()).toBe(1);
    const bob = await openSession('bob', install);
    const bobRow = page.locator(`#sessions tr[data-session="${bob.session}"]`);
    await bobRow.waitFor();
    // Filtered by principal, then by install (another install of the tenant is left out).
    const second = await h.flow.install({ owner: install.owner });
    const elsewhere = await openSession('alice', second);
    await page.locator(`#sessions tr[data-session="${elsewhere.session}"]`).waitFor();
    await page.getByLabel('Principal').fill('bob');
    await row.waitFor({ state: 'detached' });
    expect(await page.locator('#sessions tbody tr').count()).toBe(1);
    await page.getByLabel('Principal').fill('alice');
    await bobRow.waitFor({ state: 'detached' });
    expect(await page.locator('#sessions tbody tr').count()).toBe(2);
    await page.getByLabel('Install').fill(install.id);
    await expect.poll(() => page.locator('#sessions tbody tr').count()).toBe(1);
    await row.waitFor();

    // The session page, reached by keyboard from the row's link.
    await row.getByRole('link').focus();
    await page.keyboard.press('Enter');
    await page.locator('#session[data-tail="live"]').waitFor();
    await page.locator('#log .record[data-kind="session.opened"]').waitFor();
    await page.locator('#turn-chart[data-state="idle"] g.current[data-state="idle"]').waitFor();

    // Each record's arrival on the page, by cursor, in the page's clock.
    await page.evaluate(WATCH_ARRIVALS);
    await page.getByLabel(/Message as/).fill('/slow 1500\nhello from the console');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#turn-chart[data-state="inferring"] g.current').waitFor();
    await page.locator('#log .record[data-kind="turn.ended"]').waitFor({ timeout: 10_000 });
    await page.locator('#turn-chart[data-state="idle"]').waitFor();

    const message = page.locator('#log .record[data-kind="message.submitted"]');
    expect(await message.locator('.producer').textContent()).toBe(`console:${install.owner.user}`);
    expect(await message.locator('dd').first().textContent()).toContain('hello from the console');
    expect(
      await page.locator('#log .record[data-kind="model.output"] dd').first().textContent(),
    ).toContain('hello from the console');
    expect(await cursorsOn(page)).toEqual(await cursorsOf(opened));
    // Every record of the turn showed within a second of landing (its `at`).
    const arrivals = await page.evaluate<{ cursor: string; after: number }[]>(ARRIVALS);
    // The message, turn.started, model.output and turn.ended at least.
    expect(arrivals.length).toBeGreaterThanOrEqual(4);
    expect(arrivals.filter((arrival) => arrival.after > 1_000)).toEqual([]);
    // No token ever in a URL.
    const tokens = [install.owner.token, h.operatorToken];
    expect(urls.filter((url) => tokens.some((token) => url.includes(token)))).toEqual([]);
    expect(urls.some((url) => url.includes('access_token'))).toBe(false);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('resumes a dropped WebSocket from the last cursor, with no gap and no repeat', async () => {
    const opened = await openSession('carol');
    const { page, problems, urls } = await openConsole(h, { init: KEEP_SOCKETS });
    await signInWith(h, page, opened.install.owner);
    await page.goto(`${h.origin}/console#/sessions/${opened.session}`);
    await page.locator('#session[data-tail="live"]').waitFor();
    await page.locator('#log .record').first().waitFor();
    const before = await cursorsOn(page);

    // Cut the connection from the browser's side; records land while it is down.
    await page.evaluate("window.sockets.at(-1).close(4000, 'cut by the test')");
    await page.locator('#session[data-tail="reconnecting"]').waitFor();
    await appendMessage(opened, 'while the tail was down');
    await page.locator('#session[data-tail="live"]').waitFor();
    await page.locator('#log .record[data-kind="turn.ended"]').waitFor({ timeout: 10_000 });

    const sockets = urls.filter((url) => url.startsWith('ws:'));
    expect(sockets).toHaveLength(2);
    expect(new URL(sockets[1] ?? '').searchParams.get('from')).toBe(
      String((before.at(-1) ?? 0) + 1),
    );
    await expect.poll(() => cursorsOn(page)).toEqual(await cursorsOf(opened));
    expect(problems).toEqual([]);
    await page.close();
  });

  it('renders a failure with its retry, a model output with its sealed call, and the denial', async () => {
    const opened = await openSession('frank');
    const { page, problems } = await openConsole(h, { init: KEEP_SOCKETS });
    await signInWith(h, page, opened.install.owner);
    await page.goto(`${h.origin}/console#/sessions/${opened.session}`);
    await page.locator('#session[data-tail="live"]').waitFor();
    await page.getByLabel(/Message as/).fill('/fail 1\n/call lookup {"word":"hi"}');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#log .record[data-kind="turn.ended"]').waitFor({ timeout: 15_000 });

    const failed = page.locator('#log .record[data-kind="inference.failed"]');
    expect(await failed.locator('dt').allTextContents()).toContain('retry in (ms)');
    const call = page.locator('#log .record[data-kind="model.output"] .calls li').first();
    expect(await call.locator('strong').textContent()).toBe('lookup');
    // Call arguments are sealed on the public face: digest and size, never the value.
    expect(await call.locator('.sealed').textContent()).toMatch(/^sealed · \d+ bytes · /);
    expect(await call.textContent()).not.toContain('"hi"');
    // No executor: the authorizer denies the call, and says why.
    const denied = page.locator('#log .record[data-kind="invoke.denied"]');
    expect(await denied.locator('dd').allTextContents()).toContain('no_executor');
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);

  it('cancels the running turn as the console user', async () => {
    const opened = await openSession('gina');
    const { page, problems } = await openConsole(h, { init: KEEP_SOCKETS });
    await signInWith(h, page, opened.install.owner);
    await page.goto(`${h.origin}/console#/sessions/${opened.session}`);
    await page.locator('#session[data-tail="live"]').waitFor();
    await page.getByLabel(/Message as/).fill('/slow 10000\ntake your time');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#turn-chart[data-state="inferring"]').waitFor();
    await page.getByRole('button', { name: 'Cancel the turn' }).click();
    const ended = page.locator('#log .record[data-kind="turn.ended"]');
    await ended.waitFor({ timeout: 5_000 });
    expect(await ended.locator('dd').first().textContent()).toBe('cancelled');
    const cancel = page.locator('#log .record[data-kind="turn.cancel"]');
    expect(await cancel.locator('.producer').textContent()).toBe(
      `console:${opened.install.owner.user}`,
    );
    await page.locator('#turn-chart[data-state="idle"]').waitFor();
    // The state just left stays marked beside the current one.
    await page.locator('#turn-chart g.previous[data-state="inferring"]').waitFor();
    // The page writes each batch under its own key: a second message lands too.
    await page.getByLabel(/Message as/).fill('once more');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => ended.count(), { timeout: 5_000 }).toBe(2);
    expect(await page.locator('[data-error-for="message"]').textContent()).toBe('');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows a refused sign-in beside its field, and a session page that fits 390 px', async () => {
    const opened = await openSession('erin');
    const { page, problems } = await openConsole(h, { width: 390, init: KEEP_SOCKETS });
    const owner = opened.install.owner;
    await page.getByRole('textbox', { name: 'Tenant' }).fill(owner.tenant);
    await page.getByLabel('User').fill(owner.user);
    await page.getByLabel('Operator token').fill('op_not-the-operator-token');
    await page.getByRole('button', { name: 'Sign in with the operator token' }).click();
    const refused = page.locator('[data-error-for="operator"]');
    await refused.waitFor();
    expect(await refused.textContent()).not.toBe('');
    expect(await page.locator('#who').isVisible()).toBe(false);

    await signInWith(h, page, owner);
    await page.goto(`${h.origin}/console#/sessions/${opened.session}`);
    await page.locator('#session[data-tail="live"]').waitFor();
    await page.locator('#turn-chart g.current').waitFor();
    // Nothing wider than the screen: no sideways scrolling at 390 px.
    expect(await scrollWidth(page)).toBeLessThanOrEqual(390);
    // An empty message is refused beside the message box, and nothing is sent.
    await page.getByRole('button', { name: 'Send' }).click();
    expect(await page.locator('[data-error-for="message"]').textContent()).toBe(
      'Write a message first.',
    );
    expect(await page.locator('#log .record').count()).toBe(1);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows a member no owner controls, and the log from the plain audit', async () => {
    const opened = await openSession('dave');
    const [member] = await setMembers(h.harness, opened.install.owner, [
      { user: `m-${opened.session}`, role: 'member' },
    ]);
    const { page, problems } = await openConsole(h, { init: KEEP_SOCKETS });
    if (member === undefined) throw new Error('no member token');
    await signInWith(h, page, member);
    expect(await page.locator('#who-role').textContent()).toBe('member');
    await page.locator(`#sessions tr[data-session="${opened.session}"] a`).click();
    await page.locator('#owner-note').waitFor();
    expect(await page.locator('#compose').isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Send' }).count()).toBe(0);
    // The member reads the plain audit instead of the tail, and follows it.
    await page.locator('#log .record[data-kind="session.opened"]').waitFor();
    await appendMessage(opened, 'seen by a member');
    await page.locator('#log .record[data-kind="turn.ended"]').waitFor({ timeout: 10_000 });
    await expect.poll(() => cursorsOn(page)).toEqual(await cursorsOf(opened));
    expect(problems).toEqual([]);
    await page.close();
  });
});
