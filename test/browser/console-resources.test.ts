/**
 * The console's pages of a tenant's resources in headless Chromium against the real
 * service, their state reached through the public flow (proposal, consent, console API):
 * the installs with their documents, a key rotated (shown once, the old one refused at
 * once), revoked and the install deleted; the inference options and secrets page, which
 * never holds a secret's value; the members page; and a member, who sees no owner control.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { setMembers } from '../support/console.ts';
import { openConsole, scrollWidth, signInWith, usePageHarness } from '../support/console-page.ts';
import { vendorDocument, type Owner } from '../support/flow.ts';

const h = usePageHarness();

/** What opening a session with `key` answers: 201 while the key works. */
const openWith = async (key: string) =>
  (await h.flow.send('POST', '/sessions?principal=ada', key, {})).status;

/** Goes to page `hash` of the console and waits until its reads are done. */
async function visit(page: Page, hash: string): Promise<void> {
  // Busy from the moment the page opens until its reads are done.
  await page.evaluate(`document.getElementById('${hash}').removeAttribute('aria-busy')`);
  await page.goto(`${h.origin}/console#/${hash}`);
  await page.locator(`#${hash}[aria-busy="false"]`).waitFor();
}

/** The owner controls of the resource pages, by their names. */
const OWNER_CONTROLS =
  /^(Rotate key|Revoke key|Delete install|Re-authorize|Delete|Make .*|Remove|Add)$/;

describe('the installs page', () => {
  it('lists installs with their documents; rotates a key shown once, revokes, deletes', async () => {
    const policy = {
      tool: 'lookup',
      posture: 'restrictive',
      items: [{ arg: 'word', effect: 'allow', op: 'in', operand: { value: ['hi'] } }],
    };
    const install = await h.flow.install({ vendor: vendorDocument('Word finder') });
    const owner = install.owner;
    const second = await h.flow.install({
      owner,
      config: { inference: 'default', policies: [policy] },
    });
    const clipboard = ['clipboard-read', 'clipboard-write'];
    const { page, problems, urls } = await openConsole(h, { permissions: clipboard });
    await signInWith(h, page, owner);
    // Reached by keyboard from the nav.
    await page.getByRole('link', { name: 'Installs' }).focus();
    await page.keyboard.press('Enter');
    await page.locator('#installs[aria-busy="false"]').waitFor();
    const first = page.locator(`article[data-install="${install.id}"]`);
    const other = page.locator(`article[data-install="${second.id}"]`);
    expect(await first.locator('h3').textContent()).toContain('Word finder');
    await other.getByText('Policies (1)').click();
    expect(await other.locator('.policies td').allTextContents()).toEqual([
      'lookup',
      'allowed',
      'restrictive',
      'allow if word in ["hi"]',
      '',
    ]);
    await other.getByText('Tools (1)').click();
    expect(await other.locator('.tools td').first().textContent()).toBe('lookup');

    // Rotate: the new key once, in a field to copy; the old key is refused at once.
    await first.getByRole('button', { name: 'Rotate key' }).click();
    const shown = page.getByLabel('The new key');
    await shown.waitFor();
    const key = await shown.inputValue();
    expect(key).toMatch(/^ik_/);
    expect(await page.locator('#new-key-install').textContent()).toBe(install.id);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.locator('#new-key-copied', { hasText: 'Copied.' }).waitFor();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(key);
    expect(await openWith(install.key)).toBe(401);
    expect(await openWith(key)).toBe(201);
    await page.getByRole('button', { name: 'I have kept it' }).click();
    expect(await page.locator('#new-key').isVisible()).toBe(false);
    expect(await page.content()).not.toContain(key);
    expect(urls.filter((url) => url.includes(key))).toEqual([]);

    // Revoke, asked twice: no key answers afterwards.
    await first.getByRole('button', { name: 'Revoke key' }).click();
    await first.getByRole('button', { name: 'Yes, revoke key' }).click();
    await first.getByText('Key revoked').waitFor();
    expect(await openWith(key)).toBe(401);

    // Delete, asked twice, by keyboard: the question takes the focus on "Keep it"; Escape keeps.
    const focused = () => page.evaluate<string>('document.activeElement.textContent');
    await other.getByRole('button', { name: 'Delete install' }).focus();
    await page.keyboard.press('Enter');
    expect(await focused()).toBe('Keep it');
    await page.keyboard.press('Escape');
    expect(await focused()).toBe('Delete install');
    expect(await other.getByRole('button', { name: 'Yes, delete install' }).isVisible()).toBe(
      false,
    );
    await page.keyboard.press('Enter');
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('Yes, delete install');
    await page.keyboard.press('Enter');
    await other.waitFor({ state: 'detached' });
    expect(await openWith(second.key)).not.toBe(201);
    expect(await page.locator('#install-list article').count()).toBe(1);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows the service's refusal beside the control when the owner stopped being one", async () => {
    const install = await h.flow.install();
    const owner = install.owner;
    const [other] = await setMembers(h.harness, owner, [
      { user: `o-${install.id}`, role: 'owner' },
    ]);
    if (other === undefined) throw new Error('no second owner');
    const { page, problems } = await openConsole(h, { width: 390 });
    await signInWith(h, page, owner);
    // While the service has not answered, the page says it is loading.
    const { promise: held, resolve: answer } = Promise.withResolvers<undefined>();
    await page.route(`${h.origin}/installs?*`, async (route) => {
      await held;
      await route.continue();
    });
    await page.getByRole('link', { name: 'Installs' }).click();
    const loading = page.locator('#installs .loading');
    await expect.poll(() => loading.textContent()).toBe('Loading the installs…');
    expect(await loading.isVisible()).toBe(true);
    expect(await page.locator('#installs').getAttribute('aria-busy')).toBe('true');
    answer(undefined);
    await page.locator('#installs[aria-busy="false"]').waitFor();
    expect(await loading.isVisible()).toBe(false);
    expect(await scrollWidth(page)).toBeLessThanOrEqual(390);
    // The other owner makes this one a member while the page is open.
    await h.flow.expect(200, 'PUT', '/console/tenant', other.token, {
      name: 'Test tenant',
      members: [{ user: owner.user, role: 'member' }],
    });
    const card = page.locator(`article[data-install="${install.id}"]`);
    await card.getByRole('button', { name: 'Rotate key' }).click();
    const refused = card.locator('.control .error').first();
    await expect.poll(() => refused.textContent()).toMatch(/\(403\)$/);
    expect(await page.locator('#new-key').isVisible()).toBe(false);
    expect(await openWith(install.key)).toBe(201);
    expect(problems).toEqual([]);
    await page.close();
  });
});

describe('the inference options and secrets page', () => {
  it("lists names and settings, never a secret's value, in the page or any answer it got", async () => {
    const owner = await h.flow.owner();
    const value = `sk-value-${owner.tenant}-never-shown`;
    await h.flow.expect(201, 'PUT', '/secrets/provider-key', owner.token, { value });
    await h.flow.expect(201, 'PUT', '/secrets/spare', owner.token, { value: `${value}-2` });
    await h.flow.option(owner, 'keyed', { credential: 'provider-key', compact_at: 50_000 });
    const { page, problems, bodies } = await openConsole(h);
    await signInWith(h, page, owner);
    await visit(page, 'settings');
    const option = page.locator('tr[data-inference="keyed"] td');
    expect((await option.allTextContents()).slice(0, 5)).toEqual([
      'keyed',
      'simulated',
      '50000 tokens',
      '3 × from 1s',
      'provider-key',
    ]);
    await page.locator('tr[data-secret="provider-key"]').waitFor();
    // The secret in use: the service refuses its deletion, its words beside the button.
    const row = page.locator('tr[data-secret="provider-key"]');
    await row.getByRole('button', { name: 'Delete', exact: true }).click();
    await row.getByRole('button', { name: 'Yes, delete' }).click();
    await expect.poll(() => row.locator('.error').textContent()).toMatch(/\(409\)$/);
    // One not in use goes.
    const spare = page.locator('tr[data-secret="spare"]');
    await spare.getByRole('button', { name: 'Delete', exact: true }).click();
    await spare.getByRole('button', { name: 'Yes, delete' }).click();
    await spare.waitFor({ state: 'detached' });

    expect(await page.content()).not.toContain(value);
    const received = await bodies();
    expect(received.some((body) => body.includes('provider-key'))).toBe(true);
    expect(received.filter((body) => body.includes(value))).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();
  });
});

/** Opens every resource page as `user` and answers the owner controls found on them. */
async function ownerControlsSeenBy(page: Page, user: Owner): Promise<string[]> {
  await signInWith(h, page, user);
  const seen: string[] = [];
  for (const hash of ['installs', 'connections', 'settings', 'members']) {
    await visit(page, hash);
    const names = await page.locator(`#${hash} button:visible`).allTextContents();
    seen.push(...names.filter((name) => OWNER_CONTROLS.test(name)));
  }
  return seen;
}

describe('the members page', () => {
  it('lets an owner add a member and change a role; a member sees no owner control', async () => {
    const install = await h.flow.install();
    const owner = install.owner;
    await h.flow.expect(201, 'PUT', '/secrets/a-secret', owner.token, { value: 'never-shown-1' });
    const { page, problems } = await openConsole(h);
    expect((await ownerControlsSeenBy(page, owner)).length).toBeGreaterThan(0);
    // The members page was visited last.
    const user = `m-${install.id}`;
    await page.getByLabel('Person to add').fill(user);
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    const row = page.locator(`#member-list tr[data-user="${user}"]`);
    await row.waitFor();
    expect(await row.locator('td').nth(1).textContent()).toBe('member');
    // An empty name is refused beside the field.
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    expect(await page.locator('[data-error-for="member-user"]').textContent()).toBe(
      'Name the user first.',
    );

    const member = await h.flow.signIn(user, owner.tenant);
    const other = await openConsole(h);
    expect(await ownerControlsSeenBy(other.page, member)).toEqual([]);
    expect(await other.page.locator('#add-member').isVisible()).toBe(false);
    expect(await other.page.locator('#member-list tr[data-user] td').allTextContents()).toEqual(
      expect.arrayContaining([owner.user, 'owner', user, 'member']),
    );
    // Usage is for owners: the service's refusal is shown on the page.
    await other.page.goto(`${h.origin}/console#/usage`);
    await expect.poll(() => other.page.locator('#usage .page-error').textContent()).toMatch(/403/);

    // The owner makes the member an owner; the member's page, loaded again, has the controls.
    await row.getByRole('button', { name: 'Make owner' }).click();
    await expect.poll(() => row.locator('td').nth(1).textContent()).toBe('owner');
    await other.page.reload();
    await other.page.locator('#who-role', { hasText: 'owner' }).waitFor();
    await visit(other.page, 'installs');
    expect(await other.page.getByRole('button', { name: 'Rotate key' }).count()).toBe(1);
    expect([...problems, ...other.problems]).toEqual([]);
    await Promise.all([page.close(), other.page.close()]);
  });
});
