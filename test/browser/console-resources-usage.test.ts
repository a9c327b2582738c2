/**
 * The console's usage page in headless Chromium against the real service: after a turn
 * ran on a session (a message sent over HTTP) and the session was archived (so its usage
 * was checkpointed), the page's chart and table show the day's tokens under `simulated`
 * exactly as `GET /usage` answers them; a refused range shows beside its date; the page
 * reads at 390 px and at 1280 px.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { openConsole, scrollWidth, signInWith, usePageHarness } from '../support/console-page.ts';
import type { Owner } from '../support/flow.ts';

const h = usePageHarness();

interface UsageRow {
  day: string;
  tokens: Record<string, { input: number; output: number }>;
  tool_calls: Record<string, number>;
}

/** A session of a new install of `owner`'s where a turn runs, then archived by its install. */
async function turnArchived(owner: Owner, text: string): Promise<void> {
  const install = await h.flow.install({ owner });
  const opened = (await h.flow.expect(201, 'POST', '/sessions?principal=ada', install.key, {})) as {
    session: string;
    token: string;
  };
  await h.flow.expect(200, 'POST', `/sessions/${opened.session}/events`, opened.token, [
    { kind: { name: 'message.submitted', version: 1 }, body: { text } },
  ]);
  await expect
    .poll(
      async () => {
        const tail = await fetch(`${h.origin}/console/sessions/${opened.session}/events`, {
          headers: owner.headers,
        });
        return (await tail.text()).includes('"turn.ended"');
      },
      { timeout: 10_000 },
    )
    .toBe(true);
  await h.flow.expect(200, 'POST', `/sessions/${opened.session}/archive`, install.key);
}

/** The usage page for `from`..`to`, shown. */
async function showRange(page: Page, from: string, to: string): Promise<void> {
  await page.getByLabel('From').fill(from);
  await page.getByLabel('To', { exact: true }).fill(to);
  await page.evaluate("document.getElementById('usage').removeAttribute('aria-busy')");
  await page.getByRole('button', { name: 'Show' }).click();
  await page.locator('#usage[aria-busy="false"]').waitFor();
}

describe('the usage page', () => {
  it("charts and tabulates the day's tokens under simulated as GET /usage answers", async () => {
    const owner = await h.flow.owner();
    await turnArchived(owner, 'hello, count me');
    await turnArchived(owner, '/call lookup {"word":"hi"}');
    const today = new Date().toISOString().slice(0, 10);
    const rows = (await h.flow.expect(
      200,
      'GET',
      `/usage?from=${today}&to=${today}`,
      owner.token,
    )) as UsageRow[];
    const simulated = rows[0]?.tokens.simulated;
    if (simulated === undefined) throw new Error(`no simulated tokens: ${JSON.stringify(rows)}`);
    const total = simulated.input + simulated.output;
    expect(total).toBeGreaterThan(0);

    for (const width of [1280, 390]) {
      const { page, problems } = await openConsole(h, { width });
      await signInWith(h, page, owner);
      await page.getByRole('link', { name: 'Usage' }).click();
      await page.locator('#usage[aria-busy="false"]').waitFor();
      // The first range shown ends today.
      expect(await page.getByLabel('To', { exact: true }).inputValue()).toBe(today);
      await showRange(page, today, today);
      const bar = page.locator(`#usage-tokens rect[data-day="${today}"][data-series="simulated"]`);
      expect(await bar.getAttribute('data-value')).toBe(String(total));
      expect(await bar.locator('title').textContent()).toBe(
        `${today} · simulated: ${total} tokens`,
      );
      const row = page.locator(`#usage-table tr[data-day="${today}"][data-model="simulated"] td`);
      expect(await row.allTextContents()).toEqual([
        today,
        'simulated',
        String(simulated.input),
        String(simulated.output),
        String(total),
      ]);
      // Tool calls, charted and tabulated the same way (the `/call` turn made one).
      const calls = Object.entries(rows[0]?.tool_calls ?? {});
      expect(calls.length).toBeGreaterThan(0);
      for (const [tool, count] of calls) {
        const call = page.locator(`#usage-calls rect[data-day="${today}"][data-series="${tool}"]`);
        expect(await call.getAttribute('data-value')).toBe(String(count));
        const cells = page.locator(`#usage-table tr[data-day="${today}"][data-tool="${tool}"] td`);
        expect(await cells.allTextContents()).toEqual([today, tool, String(count)]);
      }
      // Readable: the chart fits the screen, nothing scrolls sideways.
      const box = await page.locator('#usage-tokens svg[role="img"]').boundingBox();
      expect(box?.width).toBeGreaterThan(300);
      expect(box?.width).toBeLessThanOrEqual(width);
      expect(await scrollWidth(page)).toBeLessThanOrEqual(width);
      expect(problems).toEqual([]);
      await page.close();
    }
  });

  it('shows a refused range beside the date it names, and an empty one as empty', async () => {
    const owner = await h.flow.owner();
    const { page, problems } = await openConsole(h);
    await signInWith(h, page, owner);
    await page.goto(`${h.origin}/console#/usage`);
    await page.locator('#usage[aria-busy="false"]').waitFor();
    await showRange(page, '2026-03-02', '2026-03-01');
    expect(await page.locator('[data-error-for="query.from"]').textContent()).toBe(
      'must not be after to',
    );
    await showRange(page, '2026-03-01', '2026-03-07');
    expect(await page.locator('[data-error-for="query.from"]').textContent()).toBe('');
    expect(await page.locator('#usage-tokens').textContent()).toBe('No tokens in this range.');
    await page.getByLabel('From').fill('');
    await page.getByRole('button', { name: 'Show' }).click();
    expect(await page.locator('[data-error-for="query.from"]').textContent()).toBe(
      'Choose the first day.',
    );
    expect(problems).toEqual([]);
    await page.close();
  });
});
