/**
 * The session view's charts in headless Chromium against the real service: the session
 * machine's chart beside the turn chart, each with the current state highlighted and the
 * transition just taken marked as the records land, and a pending tool call with its
 * claim actor's state (claim machine, interface 3.4) as its executor claims and completes
 * it over the API.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { executorSpec, executorToken, newExecutor } from '../support/executor.ts';
import { flowOf } from '../support/flow.ts';
import { linesOf, readFace } from '../http/tails/call-fixture.ts';
import { archive, openTestSession } from '../http/tails/tail-fixture.ts';
import { openConsole, openSessionView, usePageHarness } from '../support/console-page.ts';

const h = usePageHarness();

/** Notes every transition each chart marks, in order, in `window.steps[<chart id>]`. */
const WATCH_STEPS = `document.addEventListener('DOMContentLoaded', () => {
  window.steps = {};
  for (const id of ['session-chart', 'turn-chart', 'claim-chart']) {
    window.steps[id] = [];
    new MutationObserver(() => {
      const edge = document.getElementById(id).dataset.edge;
      if (edge !== undefined && window.steps[id].at(-1) !== edge) window.steps[id].push(edge);
    }).observe(document.getElementById(id), { attributes: true, attributeFilter: ['data-edge'] });
  }
});`;

const steps = (page: Page, chart: string) => page.evaluate<string[]>(`window.steps['${chart}']`);

/** The chart `id` shows `state` as current, and the edge `from → state` as just taken. */
async function shows(page: Page, id: string, state: string, from: string): Promise<void> {
  const chart = page.locator(`#${id}[data-state="${state}"][data-edge="${from}>${state}"]`);
  await chart.locator(`g.current[data-state="${state}"]`).waitFor();
  await chart.locator(`g.previous[data-state="${from}"]`).waitFor();
  await chart.locator(`g.edge.taken[data-from="${from}"][data-to="${state}"]`).waitFor();
  expect(await page.locator(`#${id} g.edge.taken`).count()).toBe(1);
}

describe('the session view’s charts', () => {
  it('moves the session and turn charts and a call’s claim as the records land', async () => {
    const flow = flowOf(h.harness);
    const mailer = await newExecutor('mailer');
    const session = await openTestSession(h.harness, undefined, {
      executor: executorSpec(mailer),
    });
    const token = await executorToken(flow, h.harness.deps.baseUrl, mailer, session.id);
    const { page, problems } = await openConsole(h, { init: WATCH_STEPS });
    await openSessionView(h, page, session.install.owner, session.id);
    await page.locator('#session[data-tail="live"]').waitFor();
    await shows(page, 'session-chart', 'live', 'none');
    await page.locator('#turn-chart[data-state="idle"] g.current[data-state="idle"]').waitFor();
    expect(await page.locator('#calls-note').textContent()).toBe('No tool calls yet.');

    await page.getByLabel(/Message as/).fill('/call lookup {"word":"hi"}');
    await page.getByRole('button', { name: 'Send' }).click();
    await shows(page, 'turn-chart', 'awaiting_tools', 'inferring');

    // The call waits for its executor: its claim actor has not been claimed.
    const call = page.locator('#calls li.call');
    await call.waitFor();
    expect(await call.locator('strong').textContent()).toBe('lookup');
    expect(await call.getAttribute('data-claim')).toBe('unclaimed');
    const callId = (await call.locator('code').textContent()) ?? '';
    expect(await page.locator('#claim-call').textContent()).toBe(callId);
    await page.locator('#claim-chart[data-state="unclaimed"] g.current').waitFor();

    // The executor claims it over the API: claimed, attempt first.
    const [allowed] = linesOf(await readFace(h.harness, session, token), 'invoke.allowed');
    const cause = allowed?.envelope.cursor ?? 0;
    const claimPath = `/sessions/${session.id}/executor/claim`;
    const claim = await flow.expect(200, 'POST', claimPath, token, { cause });
    await page.locator('#calls li.call[data-claim="claimed"]').waitFor();
    expect(await call.locator('.claim-state').textContent()).toBe('claimed · first');
    await shows(page, 'claim-chart', 'claimed', 'unclaimed');

    // Its completion under the grant answers it, and the turn goes on to its end.
    const grant = (claim as { credential: string }).credential;
    await flow.expect(200, 'POST', `/sessions/${session.id}/events`, grant, [
      {
        kind: { name: 'invoke.completed', version: 1 },
        body: { ok: true, result: { content: [{ type: 'text', text: 'found' }] }, error: null },
      },
    ]);
    await shows(page, 'claim-chart', 'answered', 'claimed');
    expect(await call.locator('.claim-state').textContent()).toBe('answered · ok');
    await page.locator('#log .record[data-kind="turn.ended"]').waitFor({ timeout: 10_000 });
    await shows(page, 'turn-chart', 'idle', 'inferring');
    expect(await steps(page, 'turn-chart')).toEqual([
      'idle>inferring',
      'inferring>awaiting_tools',
      'awaiting_tools>inferring',
      'inferring>idle',
    ]);
    expect(await steps(page, 'claim-chart')).toEqual(['unclaimed>claimed', 'claimed>answered']);

    // The archive ends both machines.
    await archive(h.harness, session);
    await shows(page, 'session-chart', 'archived', 'live');
    await shows(page, 'turn-chart', 'ended', 'idle');
    expect(await steps(page, 'session-chart')).toEqual(['none>live', 'live>archived']);
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);

  it('shows a denied call as denied, with no claim to follow', async () => {
    const session = await openTestSession(h.harness);
    const { page, problems } = await openConsole(h, { init: WATCH_STEPS });
    await openSessionView(h, page, session.install.owner, session.id);
    await page.locator('#session[data-tail="live"]').waitFor();
    await page.getByLabel(/Message as/).fill('/call lookup {"word":"hi"}');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#log .record[data-kind="turn.ended"]').waitFor({ timeout: 10_000 });
    const call = page.locator('#calls li.call');
    expect(await call.getAttribute('data-claim')).toBe('denied');
    expect(await call.locator('.claim-state').textContent()).toBe('denied · no_executor');
    // Every call of the round decided: the turn went on without waiting.
    expect(await steps(page, 'turn-chart')).toEqual([
      'idle>inferring',
      'inferring>awaiting_tools',
      'awaiting_tools>inferring',
      'inferring>idle',
    ]);
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);
});
