/**
 * `npm run screenshots` writes `docs/screenshots/*.png`, the console as the README shows
 * it: `node src/main.ts` on the embedded default in a fresh data folder, state made over
 * HTTP through the typed client as users make it (an owner signs in with the operator
 * grant and sets up a tenant, a vendor proposes, the owner consents, the install opens a
 * session, messages run turns), then headless Chromium (`/usr/bin/chromium`) signs in on
 * `/console` and shoots the session view, the statecharts view and the usage view (a
 * second session is archived first, so its usage is counted). Any failure stops the run
 * with a non-zero exit.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
// This checkout's client, by path: `node_modules` may link another checkout's package.
import { bearer, bodyOf, createClient, type SessionClient } from '../packages/client/src/index.ts';
import { launchChromium } from '../test/support/chromium.ts';
import { startService } from '../test/support/service-process.ts';

const OUT = path.resolve(import.meta.dirname, '../docs/screenshots');
const OWNER = { user: 'ada', tenant: 'acme' };
const MESSAGES = [
  'Where is order A-1?',
  '/call lookup_order {"order_id":"A-1"}\nLet me look that order up.',
  '/fail 1\nAnd order B-2?',
];

/** The tenant, an install of a vendor's app, and a session with a few turns run. */
async function makeState(base: string, operatorToken: string): Promise<string> {
  const service = createClient({ baseUrl: base });
  const { token } = await bodyOf(
    service.api.POST('/console/token', { body: OWNER, headers: bearer(operatorToken) }),
  );
  const asOwner = { headers: bearer(token) };
  await service.api.PUT('/console/tenant', { body: { name: 'Acme' }, ...asOwner });
  await service.api.PUT('/inferences/{id}', {
    params: { path: { id: 'simulated' } },
    body: { provider: 'simulated' },
    ...asOwner,
  });
  const proposal = await service.propose({
    appdoc: 1,
    name: 'Order desk',
    description: 'Answers questions about orders.',
    tools: [
      {
        name: 'lookup_order',
        description: 'Look an order up.',
        input_schema: { type: 'object', properties: { order_id: { type: 'string' } } },
        output_schema: { type: 'object' },
      },
    ],
  });
  await service.api.POST('/consent/{request}', {
    params: { path: { request: proposal.request } },
    body: { inference: 'simulated' },
    ...asOwner,
  });
  const receipt = await service.waitForConsent(proposal);
  const vendor = service.with({ installKey: receipt.key ?? '' });
  // A session that ran its turns and was archived: its usage is counted at the archive.
  const counted = vendor.session(await vendor.openSession('grace'));
  await converse(counted, MESSAGES);
  await bodyOf(
    vendor.api.POST('/sessions/{id}/archive', {
      params: { path: { id: counted.id } },
      headers: bearer(receipt.key ?? ''),
    }),
  );
  const session = vendor.session(await vendor.openSession('ada'));
  await converse(session, MESSAGES);
  await counting(service, token);
  return session.id;
}

/** Waits until today's usage row has tokens: the archive's checkpoint has been counted. */
async function counting(service: ReturnType<typeof createClient>, token: string): Promise<void> {
  const today = new Date().toISOString().slice(0, 10);
  for (let tries = 0; tries < 100; tries += 1) {
    const rows = await bodyOf(
      service.api.GET('/usage', {
        params: { query: { from: today, to: today } },
        headers: bearer(token),
      }),
    );
    if (rows.some((row) => Object.keys(row.tokens).length > 0)) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the archived session was not counted in GET /usage within 10 s');
}

/** Sends each of `messages` once the turn of the one before has ended. */
async function converse(session: SessionClient, messages: readonly string[]): Promise<void> {
  for (const text of messages) {
    const [sent] = await session.append([
      { kind: { name: 'message.submitted', version: 1 }, body: { text } },
    ]);
    // Each message's turn ends before the next is sent, so the log reads as a conversation.
    for await (const record of session.tail({ from: (sent?.cursor ?? 0) + 1 })) {
      if (record.envelope.kind.name === 'turn.ended') break;
    }
  }
}

/** Script errors of the page: a shot of a broken page is refused. */
const errors: string[] = [];

async function shoot(page: Page, name: string): Promise<void> {
  if (errors.length > 0) throw new Error(`the console failed: ${errors.join('; ')}`);
  const file = path.join(OUT, `${name}.png`);
  await page.screenshot({ path: file });
  console.log(`wrote ${path.relative(process.cwd(), file)}`);
}

const dataDir = await mkdtemp(path.join(tmpdir(), 'screenshots-'));
const server = await startService({ DATA_DIR: dataDir });
const browser = await launchChromium();
try {
  const operatorToken = /(op_\S+)/.exec(server.stderr())?.[1];
  if (operatorToken === undefined) throw new Error('the service printed no operator token');
  const session = await makeState(server.url, operatorToken);
  await mkdir(OUT, { recursive: true });

  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${server.url}/console`);
  await page.getByRole('textbox', { name: 'Tenant' }).fill(OWNER.tenant);
  await page.getByLabel('User').fill(OWNER.user);
  await page.getByLabel('Operator token').fill(operatorToken);
  await page.getByRole('button', { name: 'Sign in with the operator token' }).click();
  await page.locator('#who').waitFor();

  await page.goto(`${server.url}/console#/sessions/${session}`);
  await page.locator('#session[data-tail="live"]').waitFor();
  await page.locator('#turn-chart[data-state="idle"]').waitFor();
  await expectRecords(page, 'turn.ended', MESSAGES.length);
  // The log's latest records: the call the authorizer denied, the failed attempt retried.
  await page.evaluate(`{
    const log = document.getElementById('log');
    const denied = log.querySelector('.record[data-kind="invoke.denied"]');
    log.scrollTop = denied.getBoundingClientRect().top - log.getBoundingClientRect().top;
  }`);
  await shoot(page, 'session');

  await page.goto(`${server.url}/console#/statecharts`);
  await page.locator('article[data-machine="proposal"] .chart > svg').waitFor();
  await page.evaluate("document.getElementById('machine-proposal').scrollIntoView()");
  await shoot(page, 'statecharts');

  await page.goto(`${server.url}/console#/usage`);
  await page.locator('#usage[aria-busy="false"] #usage-tokens > svg').waitFor();
  await shoot(page, 'usage');
} finally {
  await browser.close();
  await server.stop();
  await rm(dataDir, { recursive: true, force: true });
}

/** Waits until the log shows `count` records of `kind`. */
async function expectRecords(page: Page, kind: string, count: number): Promise<void> {
  await page.waitForFunction(
    `document.querySelectorAll('#log .record[data-kind="${kind}"]').length >= ${count}`,
    undefined,
    { timeout: 15_000 },
  );
}
