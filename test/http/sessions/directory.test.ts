/**
 * The session directory (4.1 `GET /sessions`, 2.11; decisions rows 37 to 40): newest
 * first, filtered by principal through the subject digest, paged by `limit` and `after`
 * with `next` and a `Link: rel="next"` header, and only ever the caller's own sessions.
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DirectoryPage } from '../../../src/schemas/sessions.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { flowOf, type TestInstall } from '../../support/flow.ts';
import { SessionClient } from './session-client.ts';

let harness: TestApp;
let client: SessionClient;
let install: TestInstall;
/** Session ids in the order they were opened, with their principal. */
const opened: { id: string; principal: string }[] = [];

beforeAll(async () => {
  harness = await startTestApp();
  client = await SessionClient.listen(harness);
  install = await flowOf(harness).install();
  const neighbour = await flowOf(harness).install({ owner: install.owner });
  for (const principal of ['ada', 'grace', 'ada', 'ada', 'grace']) {
    opened.push({ id: (await client.open(install, principal)).session, principal });
    await client.open(neighbour, principal);
    // Distinct `opened` milliseconds, so newest first is one order.
    await sleep(3);
  }
});
afterAll(async () => {
  await harness.close();
});

/** Follows `next` from the first page; answers every page. */
async function pages(query: string): Promise<DirectoryPage[]> {
  const all: DirectoryPage[] = [];
  let path = `/sessions?${query}`;
  for (;;) {
    const answer = await client.call({ method: 'GET', path, headers: install.headers });
    expect(answer.status).toBe(200);
    const page = answer.body as DirectoryPage;
    all.push(page);
    if (page.next === null) {
      expect(answer.headers.get('link')).toBeNull();
      return all;
    }
    const link = answer.headers.get('link') ?? '';
    expect(link).toMatch(/^<http:\/\/127\.0\.0\.1\/sessions\?[^>]+>; rel="next"$/);
    const url = new URL(/^<([^>]+)>/.exec(link)?.[1] ?? '');
    expect(url.searchParams.get('after')).toBe(page.next);
    path = `/sessions?${url.searchParams.toString()}`;
  }
}

const subject = (principal: string) =>
  createHash('sha256').update(`${install.id}\u0000${principal}`).digest('hex');

describe('GET /sessions', () => {
  it("lists the install's sessions newest first, page by page", async () => {
    const all = await pages('limit=2');
    expect(all.map((page) => page.items.length)).toEqual([2, 2, 1]);
    const rows = all.flatMap((page) => page.items);
    expect(rows.map((row) => row.id)).toEqual(opened.map((s) => s.id).reverse());
    for (const row of rows) {
      expect(row.archived).toBe(false);
      expect(new Date(row.opened).toISOString()).toBe(row.opened);
      expect(row.subject).toBe(subject(opened.find((s) => s.id === row.id)?.principal ?? ''));
    }
  });

  it('filters by principal through the subject digest', async () => {
    const rows = (await pages('principal=ada&limit=2')).flatMap((page) => page.items);
    expect(rows.map((row) => row.id)).toEqual(
      opened
        .filter((s) => s.principal === 'ada')
        .map((s) => s.id)
        .reverse(),
    );
    expect((await pages('principal=nobody'))[0]?.items).toEqual([]);
  });

  it('defaults to 50 rows and shows archiving', async () => {
    const [target] = opened;
    await client.call({
      method: 'POST',
      path: `/sessions/${target?.id ?? ''}/archive`,
      headers: install.headers,
    });
    const [page] = await pages('');
    expect(page?.items).toHaveLength(5);
    expect(page?.next).toBeNull();
    expect(page?.items.find((row) => row.id === target?.id)?.archived).toBe(true);
  });
});
