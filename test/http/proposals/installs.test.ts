/**
 * The console's installs (4.3, 4.4, 3.5, §7; decisions rows 39, 40, 76, 77, 2.18):
 * `GET /installs`, `GET/PUT/DELETE /installs/{id}` and `POST/DELETE /installs/{id}/key`;
 * every section 7 condition sees its status and code.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../../support/app.ts';
import { consoleToken, setMembers, type ConsoleUser } from '../../support/console.ts';
import type { OpenApiCheck } from '../../support/openapi-check.ts';
import {
  conforms,
  flowApp,
  keyHeaders,
  openApi,
  ownerWithOption,
  installFor,
} from './flow-client.ts';

let harness: TestApp;
let check: OpenApiCheck;

beforeAll(async () => {
  ({ harness } = await flowApp());
  check = await openApi(harness);
});
afterAll(async () => {
  await harness.close();
});

/** A consented install of `owner`'s tenant and its key. */
async function memberOf(owner: ConsoleUser): Promise<ConsoleUser> {
  const [member] = await setMembers(harness, owner, [
    { user: `m-${randomUUID()}`, role: 'member' },
  ]);
  if (member === undefined) throw new Error('no member');
  return member;
}

const call = (
  method: 'GET' | 'PUT' | 'POST' | 'DELETE',
  url: string,
  user: ConsoleUser | null,
  payload?: object,
) =>
  harness.app.inject({
    method,
    url,
    headers: user === null ? {} : user.headers,
    ...(payload === undefined ? {} : { payload }),
  });

describe('GET /installs and GET /installs/{id}', () => {
  it('pages the tenant’s installs for members, and only theirs', async () => {
    const owner = await ownerWithOption(harness);
    const member = await memberOf(owner);
    const ids = [
      (await installFor(harness, owner)).install,
      (await installFor(harness, owner)).install,
      (await installFor(harness, owner)).install,
    ].sort();
    await installFor(harness, await ownerWithOption(harness)); // another tenant's

    const first = await call('GET', '/installs?limit=2', member);
    conforms(check, 'GET', '/installs', first);
    expect(first.statusCode).toBe(200);
    const page = first.json<{ items: { install: { id: string } }[]; next: string }>();
    expect(page.items.map((item) => item.install.id)).toEqual(ids.slice(0, 2));
    expect(page.next).toBe(ids[1]);
    expect(first.headers.link).toBe(`</installs?after=${ids[1] ?? ''}&limit=2>; rel="next"`);
    const rest = await call('GET', `/installs?limit=2&after=${page.next}`, member);
    expect(rest.json()).toMatchObject({ items: [{ install: { id: ids[2] } }], next: null });
    expect(rest.headers.link).toBeUndefined();
    // Row 40: more than 200 is clamped; the default is 50.
    expect(
      (await call('GET', '/installs?limit=100000', member)).json<{ items: unknown[] }>().items,
    ).toHaveLength(3);
    expect(
      (await call('GET', '/installs', member)).json<{ items: unknown[] }>().items,
    ).toHaveLength(3);

    const one = await call('GET', `/installs/${ids[0] ?? ''}`, member);
    conforms(check, 'GET', `/installs/${ids[0] ?? ''}`, one);
    expect(one.json()).toMatchObject({
      install: { id: ids[0], tenant: owner.tenant },
      tenant: { inference: 'fast' },
    });
  });

  it('refuses a bad limit (400), no token or a removed member (401), a non-member (403) and another tenant’s id (404)', async () => {
    const owner = await ownerWithOption(harness);
    const { install } = await installFor(harness, owner);
    const stranger = await ownerWithOption(harness);
    for (const limit of ['0', '-1', 'ten']) {
      const bad = await call('GET', `/installs?limit=${limit}`, owner);
      conforms(check, 'GET', '/installs', bad);
      expect(bad.statusCode).toBe(400);
      expect(bad.json()).toMatchObject({ field: 'query.limit' });
    }
    const anonymous = await call('GET', '/installs', null);
    conforms(check, 'GET', '/installs', anonymous);
    expect(anonymous.statusCode).toBe(401);
    const forged = await harness.app.inject({
      method: 'GET',
      url: '/installs',
      headers: { authorization: 'Bearer nope' },
    });
    expect(forged.statusCode).toBe(401);
    expect(forged.json()).toMatchObject({ code: 'invalid_token' });
    // A member removed from the tenant loses the token with the membership.
    const removed = await memberOf(owner);
    await setMembers(harness, owner, []);
    const ended = await call('GET', '/installs', removed);
    conforms(check, 'GET', '/installs', ended);
    expect(ended.statusCode).toBe(401);
    // A token for a tenant that does not exist yet verifies, but has no role anywhere.
    const outsider = await consoleToken(
      harness,
      `u-${randomUUID()}`,
      `t-${randomUUID().slice(0, 8)}`,
    );
    const refused = await call('GET', '/installs', outsider);
    conforms(check, 'GET', '/installs', refused);
    expect(refused.statusCode).toBe(403);
    const theirs = await call('GET', `/installs/${install}`, stranger);
    conforms(check, 'GET', `/installs/${install}`, theirs);
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json()).toMatchObject({ code: 'no_such_install' });
    expect(theirs.body).not.toContain('fast');
  });
});

describe('PUT /installs/{id}', () => {
  it('checks the body (400), the token (401), the role (403), the install (404), fit and resolution (400)', async () => {
    const owner = await ownerWithOption(harness);
    const member = await memberOf(owner);
    const { install } = await installFor(harness, owner);
    const url = `/installs/${install}`;
    const cases: [ConsoleUser | null, string, object, number, string][] = [
      [owner, url, { inference: '' }, 400, 'invalid_request'],
      [null, url, { inference: 'fast' }, 401, 'unauthenticated'],
      [member, url, { inference: 'fast' }, 403, 'not_owner'],
      [owner, '/installs/in_nope', { inference: 'fast' }, 404, 'no_such_install'],
      [owner, url, { inference: 'slow' }, 400, 'unresolved_reference'],
      [owner, url, { inference: 'fast', policies: [{ tool: 'nope' }] }, 400, 'invalid_policy'],
    ];
    for (const [user, target, body, status, code] of cases) {
      const response = await call('PUT', target, user, body);
      conforms(check, 'PUT', target, response);
      expect(response.statusCode, `${code}: ${response.body}`).toBe(status);
      expect(response.json()).toMatchObject({ code });
    }
    const ok = await call('PUT', url, owner, {
      inference: 'fast',
      policies: [{ tool: 'search', posture: 'restrictive' }],
    });
    conforms(check, 'PUT', url, ok);
    expect(ok.statusCode).toBe(200);
  });
});

describe('DELETE /installs/{id}', () => {
  it('tombstones the install: its key reads as gone, reads say gone, the option is free again', async () => {
    const owner = await ownerWithOption(harness);
    const member = await memberOf(owner);
    const { install, key } = await installFor(harness, owner);
    const url = `/installs/${install}`;
    // 2.18: an option an install names cannot be deleted.
    const inUse = await call('DELETE', '/inferences/fast', owner);
    expect(inUse.statusCode).toBe(409);
    expect(inUse.json()).toMatchObject({ installs: [install] });

    expect((await call('DELETE', url, null)).statusCode).toBe(401);
    const refused = await call('DELETE', url, member);
    conforms(check, 'DELETE', url, refused);
    expect(refused.statusCode).toBe(403);
    const deleted = await call('DELETE', url, owner);
    conforms(check, 'DELETE', url, deleted);
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');

    const gone = await harness.app.inject({
      method: 'GET',
      url: '/appdoc',
      headers: keyHeaders(key),
    });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toMatchObject({ code: 'install_gone' });
    const read = await call('GET', url, owner);
    expect(read.statusCode).toBe(404);
    expect(read.json()).toMatchObject({ code: 'install_gone' });
    expect((await call('GET', '/installs', owner)).json()).toEqual({ items: [], next: null });
    const twice = await call('DELETE', url, owner);
    conforms(check, 'DELETE', url, twice);
    expect(twice.statusCode).toBe(404);
    expect((await call('DELETE', '/inferences/fast', owner)).statusCode).toBe(204);
  });
});

describe('POST and DELETE /installs/{id}/key', () => {
  it('rotates: the new key is shown once and answers, the old one is refused', async () => {
    const owner = await ownerWithOption(harness);
    const member = await memberOf(owner);
    const { install, key } = await installFor(harness, owner);
    const url = `/installs/${install}/key`;
    expect((await call('POST', url, null)).statusCode).toBe(401);
    const refused = await call('POST', url, member);
    conforms(check, 'POST', url, refused);
    expect(refused.statusCode).toBe(403);
    const unknown = await call('POST', '/installs/in_nope/key', owner);
    conforms(check, 'POST', '/installs/in_nope/key', unknown);
    expect(unknown.statusCode).toBe(404);

    const rotated = await call('POST', url, owner);
    conforms(check, 'POST', url, rotated);
    const fresh = rotated.json<{ key: string }>().key;
    expect(fresh).toMatch(/^ik_[A-Za-z0-9_-]{43}$/);
    expect(
      (await harness.app.inject({ method: 'GET', url: '/appdoc', headers: keyHeaders(key) }))
        .statusCode,
    ).toBe(401);
    expect(
      (await harness.app.inject({ method: 'GET', url: '/appdoc', headers: keyHeaders(fresh) }))
        .statusCode,
    ).toBe(200);
    // The install's reads never show a key.
    expect((await call('GET', `/installs/${install}`, owner)).body).not.toContain(fresh);
  });

  it('revokes: no key answers until one is rotated in', async () => {
    const owner = await ownerWithOption(harness);
    const { install, key } = await installFor(harness, owner);
    const url = `/installs/${install}/key`;
    const revoked = await call('DELETE', url, owner);
    conforms(check, 'DELETE', url, revoked);
    expect(revoked.statusCode).toBe(204);
    const refused = await harness.app.inject({
      method: 'GET',
      url: '/appdoc',
      headers: keyHeaders(key),
    });
    expect(refused.statusCode).toBe(401);
    const fresh = (await call('POST', url, owner)).json<{ key: string }>().key;
    expect(
      (await harness.app.inject({ method: 'GET', url: '/appdoc', headers: keyHeaders(fresh) }))
        .statusCode,
    ).toBe(200);
  });
});
