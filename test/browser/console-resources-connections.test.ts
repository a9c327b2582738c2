/**
 * The console's connections page in headless Chromium against the real service and MCP
 * peers on loopback, linked over the console API as an owner does: a server without
 * authorization shows linked with its catalog; an OAuth server shows authorizing with no
 * catalog until the owner re-authorizes from the page and follows the URL in the same
 * browser, after which it shows linked with the tools its server lists. A member sees the
 * state and catalog but no re-authorize control.
 */
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setMembers } from '../support/console.ts';
import {
  openConsole,
  scrollWidth,
  signInWith,
  startPageHarness,
  type PageHarness,
} from '../support/console-page.ts';
import { freePort } from '../mcp/peers/loopback.ts';
import { startOAuthServer, type OAuthServer } from '../mcp/peers/oauth-server.ts';
import { sampleTools, startPagingServer, type PagingServer } from '../mcp/peers/paging.ts';

let h: PageHarness;
let oauth: OAuthServer;
let plain: PagingServer;

beforeAll(async () => {
  // The owner's browser comes back from the authorization server to `BASE_URL`: the
  // service listens there.
  const baseUrl = `http://127.0.0.1:${await freePort()}`;
  [h, oauth, plain] = await Promise.all([
    startPageHarness({ baseUrl }),
    startOAuthServer(),
    startPagingServer(sampleTools(3), 10),
  ]);
}, 30_000);
afterAll(() => Promise.all([h.close(), oauth.close(), plain.close()]));

const card = (page: Page, name: string) => page.locator(`article[data-connection="${name}"]`);

describe('the connections page', () => {
  it('shows state and catalog, and re-authorizes an OAuth link in the same browser', async () => {
    const owner = await h.flow.owner();
    await h.flow.link(owner, 'plain', plain.endpoint);
    const started = await h.flow.link(owner, 'notes', oauth.endpoint, {
      return_to: `${h.origin}/console#/connections`,
    });
    expect(started.authorize).toBeDefined();
    const { page, problems } = await openConsole(h);
    await signInWith(h, page, owner);
    await page.getByRole('link', { name: 'Connections' }).click();
    await page.locator('#connections[aria-busy="false"]').waitFor();

    const linked = card(page, 'plain');
    expect(await linked.getAttribute('data-state')).toBe('linked');
    expect(await linked.locator('.catalog td code').allTextContents()).toEqual([
      'tool-00',
      'tool-01',
      'tool-02',
    ]);
    expect(await linked.getByRole('button', { name: 'Re-authorize' }).count()).toBe(0);

    const notes = card(page, 'notes');
    expect(await notes.getAttribute('data-state')).toBe('authorizing');
    expect(await notes.textContent()).toContain('No catalog yet');
    await notes.getByRole('button', { name: 'Re-authorize' }).click();
    const follow = notes.getByRole('link', { name: /^Continue at 127\.0\.0\.1:\d+ to authorize$/ });
    await follow.waitFor();
    expect(new URL((await follow.getAttribute('href')) ?? '').origin).toBe(oauth.issuer);
    // Followed by keyboard: the link has the focus.
    await page.keyboard.press('Enter');
    // Back on the console (a new document), which reads the connection linked.
    await page.locator('article[data-connection="notes"][data-state="linked"]').waitFor();
    expect(page.url()).toBe(`${h.origin}/console#/connections`);
    expect(await card(page, 'notes').locator('.catalog td code').allTextContents()).toEqual([
      'add',
      'echo',
      'whoami',
    ]);
    expect(await card(page, 'notes').textContent()).toContain('OAuth at');
    expect(problems).toEqual([]);
    await page.close();
  });

  it('shows a member the state and catalog at 390 px, with no re-authorize control', async () => {
    const owner = await h.flow.owner();
    await h.flow.link(owner, 'notes', oauth.endpoint);
    await h.flow.link(owner, 'plain', plain.endpoint);
    const [member] = await setMembers(h.harness, owner, [
      { user: `m-${owner.tenant}`, role: 'member' },
    ]);
    if (member === undefined) throw new Error('no member');
    const { page, problems } = await openConsole(h, { width: 390 });
    await signInWith(h, page, member);
    await page.goto(`${h.origin}/console#/connections`);
    await card(page, 'plain').waitFor();
    expect(await card(page, 'notes').getAttribute('data-state')).toBe('authorizing');
    expect(await card(page, 'plain').locator('.catalog td code').count()).toBe(3);
    expect(await page.getByRole('button', { name: 'Re-authorize' }).count()).toBe(0);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(390);
    expect(problems).toEqual([]);
    await page.close();
  });
});
