/**
 * Console sign-in for tests, the way an operator-run deployment does it (decisions rows
 * 73 and 74): the operator grant mints a console token for (user, tenant), and
 * `PUT /console/tenant` creates the tenant with that user as owner.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { TestApp } from './app.ts';

export interface ConsoleUser {
  readonly user: string;
  readonly tenant: string;
  readonly token: string;
  /** `{ authorization: 'Bearer …' }` for inject calls. */
  readonly headers: { readonly authorization: string };
}

/** A console token for `user` on `tenant` through the operator grant. */
export async function consoleToken(
  harness: TestApp,
  user: string,
  tenant: string,
): Promise<ConsoleUser> {
  const operator = harness.keys.generatedOperatorToken;
  if (operator === undefined) throw new Error('the test app did not generate an operator token');
  const response = await harness.app.inject({
    method: 'POST',
    url: '/console/token',
    headers: { authorization: `Bearer ${operator}` },
    payload: { user, tenant },
  });
  expect(response.statusCode, response.body).toBe(200);
  const { token } = response.json<{ token: string }>();
  return { user, tenant, token, headers: { authorization: `Bearer ${token}` } };
}

/** A fresh tenant owned by a fresh user, with that owner's console token. */
export async function newOwner(harness: TestApp, name = 'Test tenant'): Promise<ConsoleUser> {
  const owner = await consoleToken(harness, `u-${randomUUID()}`, `t-${randomUUID().slice(0, 8)}`);
  const response = await harness.app.inject({
    method: 'PUT',
    url: '/console/tenant',
    headers: owner.headers,
    payload: { name },
  });
  expect(response.statusCode, response.body).toBe(201);
  return owner;
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
