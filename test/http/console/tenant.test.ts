import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/clock.ts';
import { CONSOLE_TOKEN_TTL_MS } from '../../../src/console/caller.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { consoleToken, newOwner, setMembers } from '../../support/console.ts';
import {
  ConsoleClient,
  expectOk,
  expectProblem,
  oneMember,
  type Caller,
} from './console-client.ts';

let harness: TestApp;
let client: ConsoleClient;

beforeAll(async () => {
  harness = await startTestApp();
  client = await ConsoleClient.of(harness);
});
afterAll(async () => {
  await harness.close();
});

const freshTenant = () => `t-${randomUUID().slice(0, 8)}`;
const freshUser = () => `u-${randomUUID()}`;

function putTenant(caller: Caller, payload: unknown) {
  return client.call({ method: 'PUT', url: '/console/tenant', headers: caller.headers, payload });
}

function memberships(caller: Caller) {
  return client.call({ method: 'GET', url: '/console/memberships', headers: caller.headers });
}

async function storedMembers(tenant: string): Promise<Record<string, string>> {
  const held = await harness.stores.control.list('membership', tenant);
  return Object.fromEntries(held.map((member) => [member.id, member.value.role]));
}

describe('PUT /console/tenant', () => {
  it('creates the tenant with the caller as its owner', async () => {
    const caller = await consoleToken(harness, freshUser(), freshTenant());
    const answer = await putTenant(caller, { name: 'Acme' });
    expect(expectOk(answer, 201)).toEqual({ outcome: 'created' });
    const tenant = await harness.stores.control.get('tenant', '', caller.tenant);
    expect(tenant?.value).toEqual({ name: 'Acme' });
    expect(await storedMembers(caller.tenant)).toEqual({ [caller.user]: 'owner' });
  });

  it('creates the tenant with the members the body lists, the caller staying owner', async () => {
    const caller = await consoleToken(harness, freshUser(), freshTenant());
    const [ada, bob] = [freshUser(), freshUser()];
    const answer = await putTenant(caller, {
      name: 'Acme',
      members: [
        { user: ada, role: 'owner' },
        { user: bob, role: 'member' },
        { user: caller.user, role: 'member' },
      ],
    });
    expectOk(answer, 201);
    expect(await storedMembers(caller.tenant)).toEqual({
      [caller.user]: 'owner',
      [ada]: 'owner',
      [bob]: 'member',
    });
  });

  it('renames the tenant for an owner, then answers unchanged for the same body', async () => {
    const owner = await newOwner(harness, 'Before');
    expect(expectOk(await putTenant(owner, { name: 'After' }), 200)).toEqual({
      outcome: 'replaced',
    });
    expect(expectOk(await putTenant(owner, { name: 'After' }), 200)).toEqual({
      outcome: 'unchanged',
    });
    const tenant = await harness.stores.control.get('tenant', '', owner.tenant);
    expect(tenant).toMatchObject({ value: { name: 'After' }, version: 2 });
  });

  it('replaces the member list, keeps it when members is absent, and the caller stays owner', async () => {
    const owner = await newOwner(harness);
    const [ada, bob, cy] = [freshUser(), freshUser(), freshUser()];
    await setMembers(harness, owner, [
      { user: ada, role: 'member' },
      { user: bob, role: 'owner' },
    ]);
    const replaced = await putTenant(owner, {
      name: 'Test tenant',
      members: [
        { user: ada, role: 'owner' },
        { user: cy, role: 'member' },
        { user: owner.user, role: 'member' },
      ],
    });
    expect(expectOk(replaced, 200)).toEqual({ outcome: 'replaced' });
    const expected = { [owner.user]: 'owner', [ada]: 'owner', [cy]: 'member' };
    expect(await storedMembers(owner.tenant)).toEqual(expected);
    expect(expectOk(await putTenant(owner, { name: 'Renamed' }), 200)).toEqual({
      outcome: 'replaced',
    });
    expect(await storedMembers(owner.tenant)).toEqual(expected);
    const same = await putTenant(owner, {
      name: 'Renamed',
      members: [
        { user: cy, role: 'member' },
        { user: ada, role: 'owner' },
      ],
    });
    expect(expectOk(same, 200)).toEqual({ outcome: 'unchanged' });
  });

  it('refuses a member that is not an owner with 403, changing nothing', async () => {
    const owner = await newOwner(harness, 'Kept');
    const member = await oneMember(harness, owner);
    expectProblem(await putTenant(member, { name: 'Taken over' }), 403, 'not_owner');
    const tenant = await harness.stores.control.get('tenant', '', owner.tenant);
    expect(tenant?.value.name).toBe('Test tenant');
  });

  it('refuses a user of an existing tenant whose membership was removed, at once', async () => {
    const owner = await newOwner(harness);
    const removed = await oneMember(harness, owner, 'owner');
    expectOk(await putTenant(removed, { name: 'Test tenant' }), 200);
    await setMembers(harness, owner, []);
    // The token stood on the membership and ends with it, at once.
    expectProblem(await putTenant(removed, { name: 'Mine now' }), 401, 'invalid_token');
    expectProblem(await memberships(removed), 401, 'invalid_token');
    // Added again, the user has a new membership: the old token stays refused, a new one works.
    await setMembers(harness, owner, [{ user: removed.user, role: 'member' }]);
    expectProblem(await memberships(removed), 401, 'invalid_token');
    const again = await consoleToken(harness, removed.user, owner.tenant);
    expect(expectOk(await memberships(again), 200)).toEqual([
      { tenant: owner.tenant, role: 'member' },
    ]);
  });

  it('refuses a member listed twice with 400 naming the second entry', async () => {
    const owner = await newOwner(harness);
    const ada = freshUser();
    const answer = await putTenant(owner, {
      name: 'Test tenant',
      members: [
        { user: ada, role: 'member' },
        { user: ada, role: 'owner' },
      ],
    });
    expectProblem(answer, 400, 'duplicate_member', 'body.members.1.user');
  });

  it('refuses an invalid body with 400 naming the field, before the credential', async () => {
    expectProblem(
      await putTenant({ headers: {} }, { name: '' }),
      400,
      'invalid_request',
      'body.name',
    );
    const owner = await newOwner(harness);
    expectProblem(
      await putTenant(owner, { name: 'Acme', members: [{ user: 'ada', role: 'admin' }] }),
      400,
      'invalid_request',
      'body.members.0.role',
    );
  });

  it('refuses a missing or unverified console token with 401', async () => {
    expectProblem(await putTenant({ headers: {} }, { name: 'Acme' }), 401, 'unauthenticated');
    const garbage = await putTenant(
      { headers: { authorization: 'Bearer not.a.token' } },
      { name: 'Acme' },
    );
    expectProblem(garbage, 401, 'invalid_token');
    const session = await harness.deps.tokens.mint(
      'session',
      { sub: `console:${freshUser()}`, tid: freshTenant() },
      60_000,
    );
    const wrongAudience = await putTenant(
      { headers: { authorization: `Bearer ${session.token}` } },
      { name: 'Acme' },
    );
    expectProblem(wrongAudience, 401, 'invalid_token');
  });

  it('lets exactly one of two users racing to create a tenant own it', async () => {
    const tenant = freshTenant();
    const first = await consoleToken(harness, freshUser(), tenant);
    const second = await consoleToken(harness, freshUser(), tenant);
    const answers = await Promise.all([
      putTenant(first, { name: 'First' }),
      putTenant(second, { name: 'Second' }),
    ]);
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses[0]).toBe(201);
    // The loser finds the tenant created without it: its token stands on no membership
    // there (401), or its write lost the race (409).
    expect([401, 409]).toContain(statuses[1]);
    const members = await storedMembers(tenant);
    expect(Object.values(members)).toEqual(['owner']);
  });
});

describe('GET /console/memberships', () => {
  it("lists the user's tenants with the role in each", async () => {
    const user = freshUser();
    const own = await consoleToken(harness, user, freshTenant());
    expectOk(await putTenant(own, { name: 'Own' }), 201);
    const other = await newOwner(harness);
    await setMembers(harness, other, [{ user, role: 'member' }]);
    const answer = expectOk(await memberships(own), 200) as { tenant: string; role: string }[];
    expect(answer.sort((a, b) => a.tenant.localeCompare(b.tenant))).toEqual(
      [
        { tenant: own.tenant, role: 'owner' },
        { tenant: other.tenant, role: 'member' },
      ].sort((a, b) => a.tenant.localeCompare(b.tenant)),
    );
  });

  it('answers an empty list for a user of no tenant yet', async () => {
    const caller = await consoleToken(harness, freshUser(), freshTenant());
    expect(expectOk(await memberships(caller), 200)).toEqual([]);
  });

  it('refuses a missing console token with 401', async () => {
    expectProblem(await memberships({ headers: {} }), 401, 'unauthenticated');
  });
});

describe('GET /console/tenant', () => {
  it("answers any member the tenant's name and members by user, and a stranger 403", async () => {
    const owner = await newOwner(harness, 'Read me');
    const member = await oneMember(harness, owner);
    const answer = expectOk(
      await client.call({ method: 'GET', url: '/console/tenant', headers: member.headers }),
      200,
    );
    const members = [
      { user: owner.user, role: 'owner' },
      { user: member.user, role: 'member' },
    ].sort((a, b) => (a.user < b.user ? -1 : 1));
    expect(answer).toEqual({ tenant: owner.tenant, name: 'Test tenant', members });
    // A token minted before the tenant existed stands on no membership.
    const stranger = await consoleToken(harness, freshUser(), freshTenant());
    const refused = await client.call({
      method: 'GET',
      url: '/console/tenant',
      headers: stranger.headers,
    });
    expect(refused.status).toBe(403);
  });
});

describe('console tokens end after an hour', () => {
  it('refuses a console token an hour and a minute old with 401', async () => {
    const clock = new ManualClock(Date.now());
    const timed = await startTestApp({ clock });
    try {
      const owner = await newOwner(timed);
      const call = () =>
        timed.app.inject({ method: 'GET', url: '/console/memberships', headers: owner.headers });
      expect((await call()).statusCode).toBe(200);
      clock.advance(CONSOLE_TOKEN_TTL_MS + 60_000);
      const expired = await call();
      expect(expired.statusCode).toBe(401);
      expect(expired.json()).toMatchObject({ code: 'invalid_token' });
      expect(expired.json<{ message: string }>().message).toBe('the token has expired');
    } finally {
      await timed.close();
    }
  });
});
