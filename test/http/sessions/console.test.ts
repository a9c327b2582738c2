/**
 * The console's session routes (4.4; decisions rows 7, 60, 75): the tenant's directory
 * for members, tokens writing as `console:<user>` and archiving for owners, and nothing
 * of another tenant's sessions.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsoleDirectoryPage } from '../../../src/schemas/sessions.ts';
import type { Envelope } from '../../../src/schemas/records.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner, setMembers, type ConsoleUser } from '../../support/console.ts';
import { flowOf, type TestInstall } from '../../support/flow.ts';
import { message, SessionClient } from './session-client.ts';

let harness: TestApp;
let client: SessionClient;
let owner: ConsoleUser;
let member: ConsoleUser;
let stranger: ConsoleUser;
let install: TestInstall;
const sessions: string[] = [];

beforeAll(async () => {
  harness = await startTestApp();
  client = await SessionClient.listen(harness);
  owner = await newOwner(harness);
  [member] = (await setMembers(harness, owner, [{ user: `m-${owner.user}`, role: 'member' }])) as [
    ConsoleUser,
  ];
  stranger = await newOwner(harness);
  install = await flowOf(harness).install({ owner });
  const second = await flowOf(harness).install({ owner });
  for (const target of [install, second, install]) {
    sessions.push((await client.open(target)).session);
    await sleep(3);
  }
  await client.open(await flowOf(harness).install({ owner: stranger }));
});
afterAll(async () => {
  await harness.close();
});

describe('GET /console/sessions', () => {
  it("pages the tenant's sessions newest first for any member, naming each install", async () => {
    const first = await client.call({
      method: 'GET',
      path: '/console/sessions?limit=2',
      headers: member.headers,
    });
    expect(first.status).toBe(200);
    const page = first.body as ConsoleDirectoryPage;
    expect(page.items.map((row) => row.id)).toEqual([sessions[2], sessions[1]]);
    expect(page.items[0]?.install).toBe(install.id);
    expect(first.headers.get('link')).toContain('rel="next"');
    const rest = await client.call({
      method: 'GET',
      path: `/console/sessions?limit=2&after=${page.next ?? ''}`,
      headers: member.headers,
    });
    expect((rest.body as ConsoleDirectoryPage).items.map((row) => row.id)).toEqual([sessions[0]]);
    expect((rest.body as ConsoleDirectoryPage).next).toBeNull();
  });

  it('shows another tenant nothing of these, and refuses no token (401)', async () => {
    const theirs = await client.call({
      method: 'GET',
      path: '/console/sessions',
      headers: stranger.headers,
    });
    const ids = (theirs.body as ConsoleDirectoryPage).items.map((row) => row.id);
    expect(ids).toHaveLength(1);
    expect(ids.some((id) => sessions.includes(id))).toBe(false);
    await client.refused({ method: 'GET', path: '/console/sessions' }, 401, 'unauthenticated');
    await client.refused(
      { method: 'GET', path: '/console/sessions?limit=0', headers: member.headers },
      400,
      'invalid_request',
    );
  });
});

describe('POST /console/sessions/{id}/token', () => {
  it('gives an owner a token that writes as console:<user>', async () => {
    const id = sessions[0] ?? '';
    const path = `/console/sessions/${id}/token`;
    await client.refused({ method: 'POST', path, headers: member.headers }, 403, 'not_owner');
    await client.refused(
      { method: 'POST', path, headers: stranger.headers },
      404,
      'session_not_found',
    );
    const answer = await client.call({ method: 'POST', path, headers: owner.headers });
    expect(answer.status).toBe(200);
    const { session, token } = answer.body as { session: string; token: string };
    expect(session).toBe(id);
    const landed = await client.append(id, token, [message('from the console')]);
    expect((landed.body as Envelope[])[0]?.producer).toBe(`console:${owner.user}`);
  });
});

describe('POST /console/sessions/{id}/archive', () => {
  it('lets an owner archive a tenant session, by console:<user>, idempotently', async () => {
    const id = sessions[1] ?? '';
    const path = `/console/sessions/${id}/archive`;
    await client.refused({ method: 'POST', path }, 401, 'unauthenticated');
    await client.refused({ method: 'POST', path, headers: member.headers }, 403, 'not_owner');
    await client.refused(
      { method: 'POST', path, headers: stranger.headers },
      404,
      'session_not_found',
    );
    await client.refused(
      { method: 'POST', path: '/console/sessions/nope/archive', headers: owner.headers },
      404,
      'session_not_found',
    );
    const archived = await client.call({ method: 'POST', path, headers: owner.headers });
    expect(archived.status).toBe(200);
    expect(archived.body).toMatchObject({ archived: true, id, live: { phase: 'ended' } });
    const head = (await harness.stores.log.head(id))?.head ?? 0;
    const [final] = await harness.stores.log.read(id, { from: head });
    expect(JSON.parse(final?.body ?? '{}')).toEqual({ by: `console:${owner.user}` });
    const repeat = await client.call({ method: 'POST', path, headers: owner.headers });
    expect(repeat.body).toEqual(archived.body);
  });
});
