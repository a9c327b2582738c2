/**
 * The opened audit in the console's session view (interface 4.3, 5 rule 4), in headless
 * Chromium against the real service: a session whose turn made a tool call (claimed and
 * completed by its executor) is archived; its owner opens the audit on the session page
 * and reads the call's arguments and result, sealed on the live log. A member, and an
 * owner on a live session, are offered no audit.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { setMembers } from '../support/console.ts';
import { ARGS, RESULT, sessionWithCall } from '../http/tails/call-fixture.ts';
import { archive, openTestSession } from '../http/tails/tail-fixture.ts';
import { openConsole, openSessionView, usePageHarness } from '../support/console-page.ts';

const h = usePageHarness();

const logText = async (page: Page) => (await page.locator('#log').textContent()) ?? '';

describe('the session view’s opened audit', () => {
  it('shows an owner the arguments and result of an archived session’s call', async () => {
    const session = await sessionWithCall(h.harness);
    await archive(h.harness, session);
    const { page, problems } = await openConsole(h);
    await openSessionView(h, page, session.install.owner, session.id);
    await page.locator('#log .record[data-kind="session.archived"]').waitFor();

    // The live log shows the public face: the call's arguments sealed.
    const call = page.locator('#log .record[data-kind="model.output"] .calls li').first();
    expect(await call.locator('.sealed').textContent()).toMatch(/^sealed · \d+ bytes · /);
    expect(await call.textContent()).not.toContain(ARGS.word);
    const completed = page.locator('#log .record[data-kind="invoke.completed"]');
    expect(await completed.locator('.sealed').count()).toBe(1);
    expect(await page.locator('#log .record[data-kind="invoke.allowed"]').count()).toBe(0);

    const open = page.getByRole('button', { name: 'Open the audit' });
    await open.focus();
    await page.keyboard.press('Enter');
    await page.locator('#session[data-face="opened"]').waitFor();
    expect(await page.locator('#log-title').textContent()).toBe('Log: the opened audit');

    // The model's call, with its arguments opened.
    await expect.poll(() => call.textContent()).toContain(JSON.stringify(ARGS));
    // The authorizer's invoke.allowed, addressed to the executor: its arguments, no gate.
    const allowed = page.locator('#log .record[data-kind="invoke.allowed"]');
    expect(await allowed.count()).toBe(1);
    expect(await allowed.locator('.to').textContent()).toBe('→ executor:mailer');
    expect(await allowed.locator('dd').allTextContents()).toContain(JSON.stringify(ARGS));
    expect(await allowed.textContent()).not.toContain('gate');
    // The executor's result, opened.
    const result = completed.locator('dd').nth(1);
    expect(JSON.parse((await result.textContent()) ?? '')).toMatchObject(RESULT);
    expect(await logText(page)).not.toContain('"sealed"');
    expect(await page.locator('#log .sealed').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  }, 30_000);

  it('offers no audit to a member of the tenant, nor on a live session', async () => {
    const ended = await openTestSession(h.harness);
    await archive(h.harness, ended);
    const owner = ended.install.owner;
    const [member] = await setMembers(h.harness, owner, [
      { user: `m-${ended.id}`, role: 'member' },
    ]);
    if (member === undefined) throw new Error('no member token');
    const { page, problems } = await openConsole(h);
    await openSessionView(h, page, member, ended.id);
    await page.locator('#log .record[data-kind="session.archived"]').waitFor();
    expect(await page.locator('#audit').isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: 'Open the audit' }).count()).toBe(0);

    // An owner on a live session of the same tenant: not offered either.
    const live = await openTestSession(h.harness, owner);
    const second = await openConsole(h);
    await openSessionView(h, second.page, owner, live.id);
    await second.page.locator('#session[data-tail="live"]').waitFor();
    expect(await second.page.getByRole('button', { name: 'Open the audit' }).count()).toBe(0);
    expect([...problems, ...second.problems]).toEqual([]);
    await page.close();
    await second.page.close();
  }, 30_000);
});
