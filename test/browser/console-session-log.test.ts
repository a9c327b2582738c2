/**
 * The session view's log under load, in headless Chromium against the real service: while
 * an owner watches a session, a thousand records a second land on it (plain appends over
 * HTTP with the session token, in batches); every record is known to the page within a
 * second of landing, the log's document stays under a fixed number of nodes however long
 * the log grows, and the log is still read by keyboard and by scrolling back.
 */
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { openConsole, openSessionView, usePageHarness } from '../support/console-page.ts';
import type { TestInstall } from '../support/flow.ts';

const h = usePageHarness();

const BATCH = 100;
const EVERY_MS = 100;
const BATCHES = 50;
/** The log's nodes at most, at any time: a window of records, whatever the log's length. */
const NODE_BOUND = 1_500;

/**
 * Notes in the page when each cursor becomes the newest the log shows (`data-last-cursor`,
 * the page's clock), and the most nodes the log held, sampled every 20 ms.
 */
const WATCH = `{
  const list = document.getElementById('log');
  window.lastSeen = [];
  window.maxNodes = 0;
  new MutationObserver(() => window.lastSeen.push([Number(list.dataset.lastCursor), Date.now()]))
    .observe(list, { attributes: true, attributeFilter: ['data-last-cursor'] });
  const sample = () => {
    window.maxNodes = Math.max(window.maxNodes, list.getElementsByTagName('*').length);
  };
  window.sampler = setInterval(sample, 20);
}`;

interface Landed {
  readonly last: number;
  readonly at: number;
}

/** One batch of `turn.cancel {turn: null}` (nothing to cancel: no turn runs), as the principal. */
async function appendBatch(session: string, token: string): Promise<Landed> {
  const records = Array.from({ length: BATCH }, () => ({
    kind: { name: 'turn.cancel', version: 1 },
    body: { turn: null },
  }));
  const response = await fetch(`${h.origin}/sessions/${session}/events`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    },
    body: JSON.stringify(records),
  });
  expect(response.status).toBe(200);
  const envelopes = (await response.json()) as { cursor: number; at: string | number }[];
  const last = envelopes.reduce((a, b) => (b.cursor > a.cursor ? b : a));
  return { last: last.cursor, at: new Date(last.at).getTime() };
}

const focusedCursor = (page: Page) =>
  page.evaluate<string | undefined>('document.activeElement?.dataset.cursor');
const renderedCursors = (page: Page) =>
  page.evaluate<number[]>(
    "[...document.querySelectorAll('#log .record')].map((item) => Number(item.dataset.cursor))",
  );

/** A session that a new install opened for `lee`, through the public flow. */
async function openSession(): Promise<{ install: TestInstall; session: string; token: string }> {
  const install = await h.flow.install();
  const opened = (await h.flow.expect(201, 'POST', '/sessions?principal=lee', install.key, {})) as {
    session: string;
    token: string;
  };
  return { install, ...opened };
}

describe('the session view’s log', () => {
  it('keeps up with a thousand records a second in bounded nodes, and reads back by keyboard', async () => {
    const { install, ...opened } = await openSession();
    const { page, problems } = await openConsole(h);
    await openSessionView(h, page, install.owner, opened.session);
    await page.locator('#session[data-tail="live"]').waitFor();
    await page.evaluate(WATCH);

    const started = Date.now();
    const sent: Promise<Landed>[] = [];
    for (let i = 0; i < BATCHES; i++) {
      sent.push(appendBatch(opened.session, opened.token));
      await new Promise((resolve) =>
        setTimeout(resolve, started + (i + 1) * EVERY_MS - Date.now()),
      );
    }
    const landed = await Promise.all(sent);
    const head = Math.max(...landed.map((batch) => batch.last));
    expect(head).toBe(1 + BATCH * BATCHES);
    // The rate asked for was met: the appends landed at about a thousand records a second.
    const span = Math.max(...landed.map((b) => b.at)) - Math.min(...landed.map((b) => b.at));
    expect((BATCH * (BATCHES - 1)) / (span / 1000)).toBeGreaterThan(700);

    await page.locator(`#log[data-last-cursor="${head}"]`).waitFor({ timeout: 5_000 });
    const seen = await page.evaluate<[number, number][]>('window.lastSeen');
    // Every batch's last record was the newest shown within a second of landing.
    const late = landed.flatMap((batch) => {
      const shown = seen.find(([cursor]) => cursor >= batch.last);
      const after = shown === undefined ? Infinity : shown[1] - batch.at;
      return after > 1_000 ? [{ ...batch, after }] : [];
    });
    expect(late).toEqual([]);
    await page.evaluate('clearInterval(window.sampler)');
    const maxNodes = await page.evaluate<number>('window.maxNodes');
    expect(maxNodes).toBeGreaterThan(0);
    expect(maxNodes).toBeLessThan(NODE_BOUND);
    expect(await page.locator('#log-status').textContent()).toMatch(
      new RegExp(`^${head} records; showing #\\d+ to #${head}\\.$`),
    );

    // By keyboard: the log is the tab stop after the controls, at its newest record; then
    // the oldest, a record down, ten down, the newest.
    await page.getByRole('button', { name: 'Cancel the turn' }).focus();
    await page.keyboard.press('Tab');
    expect(await focusedCursor(page)).toBe(String(head));
    await page.keyboard.press('Home');
    expect(await focusedCursor(page)).toBe('1');
    await page.keyboard.press('ArrowDown');
    expect(await focusedCursor(page)).toBe('2');
    await page.keyboard.press('PageDown');
    expect(await focusedCursor(page)).toBe('12');
    const latest = page.locator('#log-latest');
    expect(await latest.textContent()).toMatch(/^\d+ newer records: show the newest$/);
    await page.keyboard.press('End');
    expect(await focusedCursor(page)).toBe(String(head));
    expect(await latest.isVisible()).toBe(false);
    await page.keyboard.press('ArrowUp');
    expect(await focusedCursor(page)).toBe(String(head - 1));

    // Scrolling back to the top of the window renders the records before it.
    const before = Math.min(...(await renderedCursors(page)));
    await page.evaluate("document.getElementById('log').scrollTop = 0");
    await expect.poll(async () => Math.min(...(await renderedCursors(page)))).toBeLessThan(before);
    expect(await page.locator('#log *').count()).toBeLessThan(NODE_BOUND);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);

  it('keeps the newest records as data once the log outgrows the page, and reads back from the oldest kept', async () => {
    const { install, ...opened } = await openSession();
    // Eleven thousand records, landed before the page opens: the tail hands them on at once.
    for (let i = 0; i < 110; i += 10) {
      await Promise.all(
        Array.from({ length: 10 }, () => appendBatch(opened.session, opened.token)),
      );
    }
    const head = 1 + 110 * BATCH;
    const { page, problems } = await openConsole(h);
    await openSessionView(h, page, install.owner, opened.session);
    await page.locator(`#log[data-last-cursor="${head}"]`).waitFor({ timeout: 30_000 });
    const status = (await page.locator('#log-status').textContent()) ?? '';
    const kept = Number(
      new RegExp(
        `^${head} records; showing #\\d+ to #${head} \\(the newest (\\d+) are kept on this page\\)\\.$`,
      ).exec(status)?.[1],
    );
    expect(kept).toBeGreaterThanOrEqual(9_000);
    expect(kept).toBeLessThanOrEqual(10_000);
    expect(await page.locator('#log *').count()).toBeLessThan(NODE_BOUND);
    // Home reaches the oldest record kept; the ones before it are left to the audit.
    await page.locator('#log .record[tabindex="0"]').focus();
    await page.keyboard.press('Home');
    expect(await focusedCursor(page)).toBe(String(head - kept + 1));
    expect(problems).toEqual([]);
    await page.close();
  }, 90_000);
});
