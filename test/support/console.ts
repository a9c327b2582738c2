/**
 * Console sign-in for tests, the way an operator-run deployment does it (decisions rows
 * 73 and 74), through the public flow (`flow.ts`): the operator grant mints a console
 * token for (user, tenant), and `PUT /console/tenant` creates the tenant with that user as
 * owner.
 */
import { expect } from 'vitest';
import type { TestApp } from './app.ts';
import { flowOf, type Owner } from './flow.ts';

/** A console user's token on one tenant. */
export type ConsoleUser = Owner;

/** A console token for `user` on `tenant` through the operator grant. */
export function consoleToken(harness: TestApp, user: string, tenant: string): Promise<ConsoleUser> {
  return flowOf(harness).signIn(user, tenant);
}

/** A fresh tenant owned by a fresh user, with that owner's console token. */
export function newOwner(harness: TestApp, name = 'Test tenant'): Promise<ConsoleUser> {
  return flowOf(harness).owner(name);
}

/**
 * Replaces the owner's member list with `members` (the caller stays owner, decisions row
 * 74) and answers a console token for each of them.
 */
export async function setMembers(
  harness: TestApp,
  owner: ConsoleUser,
  members: readonly { readonly user: string; readonly role: 'owner' | 'member' }[],
): Promise<ConsoleUser[]> {
  const response = await harness.app.inject({
    method: 'PUT',
    url: '/console/tenant',
    headers: owner.headers,
    payload: { name: 'Test tenant', members },
  });
  expect(response.statusCode, response.body).toBe(200);
  return Promise.all(members.map((member) => consoleToken(harness, member.user, owner.tenant)));
}
