import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner, setMembers, type ConsoleUser } from '../../support/console.ts';
import { flowOf, type Owner } from '../../support/flow.ts';
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

const freshName = () => `o-${randomUUID().slice(0, 8)}`;

function put(caller: Caller, name: string, payload: unknown) {
  return client.call({
    method: 'PUT',
    url: `/inferences/${name}`,
    headers: caller.headers,
    payload,
  });
}
function get(caller: Caller, name: string) {
  return client.call({ method: 'GET', url: `/inferences/${name}`, headers: caller.headers });
}
function list(caller: Caller) {
  return client.call({ method: 'GET', url: '/inferences', headers: caller.headers });
}
function remove(caller: Caller, name: string) {
  return client.call({ method: 'DELETE', url: `/inferences/${name}`, headers: caller.headers });
}

async function ownerAndMember(): Promise<[ConsoleUser, ConsoleUser]> {
  const owner = await newOwner(harness);
  return [owner, await oneMember(harness, owner)];
}

/** An install of the owner's tenant made by consent selecting `option`; deleted if asked. */
async function installSelecting(owner: Owner, option: string, deleted = false): Promise<string> {
  const flow = flowOf(harness);
  const install = await flow.install({ owner, config: { inference: option } });
  if (deleted) await flow.expect(204, 'DELETE', `/installs/${install.id}`, owner.token);
  return install.id;
}

describe('PUT /inferences/{id}', () => {
  it('creates an option with the 2.13 defaults, reads it back, and answers unchanged for the same option', async () => {
    const owner = await newOwner(harness);
    const name = freshName();
    expect(expectOk(await put(owner, name, { provider: 'simulated' }), 201)).toEqual({
      outcome: 'created',
    });
    const read = expectOk(await get(owner, name), 200) as Record<string, unknown>;
    expect(read).toMatchObject({
      name,
      provider: 'simulated',
      compact_at: 100_000,
      retry: { attempts: 3, backoff: '1s' },
      credential: null,
    });
    // The defaults written out are the same option.
    const explicit = {
      provider: 'simulated',
      compact_at: 100_000,
      retry: { backoff: '1s', attempts: 3 },
    };
    expect(expectOk(await put(owner, name, explicit), 200)).toEqual({ outcome: 'unchanged' });
    expect(expectOk(await get(owner, name), 200)).toEqual(read);
  });

  it('replaces an option under an existing name', async () => {
    const owner = await newOwner(harness);
    const name = freshName();
    await put(owner, name, { provider: 'simulated' });
    const replaced = await put(owner, name, {
      provider: 'simulated',
      compact_at: 2048,
      retry: { attempts: 10, backoff: '100ms' },
    });
    expect(expectOk(replaced, 200)).toEqual({ outcome: 'replaced' });
    expect(expectOk(await get(owner, name), 200)).toMatchObject({
      compact_at: 2048,
      retry: { attempts: 10, backoff: '100ms' },
    });
  });

  it('accepts a credential the tenant holds and refuses one it does not hold with 400 naming body.credential', async () => {
    const owner = await newOwner(harness);
    const secret = `s-${randomUUID().slice(0, 8)}`;
    const refused = await put(owner, freshName(), { provider: 'simulated', credential: secret });
    expectProblem(refused, 400, 'unknown_secret', 'body.credential');
    await client.call({
      method: 'PUT',
      url: `/secrets/${secret}`,
      headers: owner.headers,
      payload: { value: `v-${randomUUID()}` },
    });
    const name = freshName();
    expectOk(await put(owner, name, { provider: 'simulated', credential: secret }), 201);
    expect(expectOk(await get(owner, name), 200)).toMatchObject({ credential: secret });
  });

  it('refuses invalid bodies with 400 naming the field', async () => {
    const owner = await newOwner(harness);
    const cases: [unknown, string][] = [
      [{ provider: 'openai' }, 'body.provider'],
      [{}, 'body.provider'],
      [{ provider: 'simulated', compact_at: 1023 }, 'body.compact_at'],
      [{ provider: 'simulated', compact_at: 2048.5 }, 'body.compact_at'],
      [{ provider: 'simulated', retry: { attempts: 0, backoff: '1s' } }, 'body.retry.attempts'],
      [{ provider: 'simulated', retry: { attempts: 11, backoff: '1s' } }, 'body.retry.attempts'],
      [{ provider: 'simulated', retry: { attempts: 3, backoff: '99ms' } }, 'body.retry.backoff'],
      [{ provider: 'simulated', retry: { attempts: 3, backoff: '61s' } }, 'body.retry.backoff'],
      [{ provider: 'simulated', retry: { attempts: 3 } }, 'body.retry.backoff'],
      [{ provider: 'simulated', credential: 'no/slash' }, 'body.credential'],
    ];
    for (const [payload, field] of cases) {
      expectProblem(await put(owner, freshName(), payload), 400, 'invalid_request', field);
    }
    expectProblem(
      await put(owner, 'bad name', { provider: 'simulated' }),
      400,
      'invalid_request',
      'params.id',
    );
  });

  it('checks the role before the credential reference: a member gets 403, not 400', async () => {
    const [, member] = await ownerAndMember();
    const payload = { provider: 'simulated', credential: 'nothing-held' };
    expectProblem(await put(member, freshName(), payload), 403, 'not_owner');
    expectProblem(await put({ headers: {} }, freshName(), payload), 401, 'unauthenticated');
  });
});

describe('GET /inferences and GET /inferences/{id}', () => {
  it('lets members read every option by name', async () => {
    const [owner, member] = await ownerAndMember();
    const [a, b] = [`a-${randomUUID().slice(0, 6)}`, `b-${randomUUID().slice(0, 6)}`];
    await put(owner, b, { provider: 'simulated', compact_at: 5000 });
    await put(owner, a, { provider: 'simulated' });
    const rows = expectOk(await list(member), 200) as { name: string; compact_at: number }[];
    expect(rows.map((row) => [row.name, row.compact_at])).toEqual([
      [a, 100_000],
      [b, 5000],
    ]);
    expect(expectOk(await get(member, b), 200)).toMatchObject({ name: b, compact_at: 5000 });
  });

  it('answers 404 for a name the tenant has no option under', async () => {
    const owner = await newOwner(harness);
    expectProblem(await get(owner, freshName()), 404, 'inference_not_found');
  });

  it('refuses a missing token and a removed member with 401', async () => {
    const [owner, member] = await ownerAndMember();
    await setMembers(harness, owner, []);
    expectProblem(await list({ headers: {} }), 401, 'unauthenticated');
    expectProblem(await get({ headers: {} }, freshName()), 401, 'unauthenticated');
    // The member's token ended with the membership.
    expectProblem(await list(member), 401, 'invalid_token');
    expectProblem(await get(member, freshName()), 401, 'invalid_token');
  });
});

describe('DELETE /inferences/{id}', () => {
  it('deletes an option no install selects: 204, then 404', async () => {
    const owner = await newOwner(harness);
    const name = freshName();
    await put(owner, name, { provider: 'simulated' });
    const deleted = await remove(owner, name);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expectProblem(await get(owner, name), 404, 'inference_not_found');
    expectProblem(await remove(owner, name), 404, 'inference_not_found');
  });

  it('refuses with 409 and the installs (2.18) while installs select it; a deleted install does not hold it', async () => {
    const owner = await newOwner(harness);
    const name = freshName();
    await put(owner, name, { provider: 'simulated' });
    const live = await installSelecting(owner, name);
    await installSelecting(owner, name, true);
    const refused = await remove(owner, name);
    expectProblem(refused, 409, 'inference_in_use');
    expect(refused.body).toMatchObject({ installs: [live] });
    expect(expectOk(await get(owner, name), 200)).toMatchObject({ name });
    await flowOf(harness).expect(204, 'DELETE', `/installs/${live}`, owner.token);
    expect((await remove(owner, name)).status).toBe(204);
  });

  it('refuses a member with 403 and a missing token with 401, keeping the option', async () => {
    const [owner, member] = await ownerAndMember();
    const name = freshName();
    await put(owner, name, { provider: 'simulated' });
    expectProblem(await remove(member, name), 403, 'not_owner');
    expectProblem(await remove({ headers: {} }, name), 401, 'unauthenticated');
    expect((await get(owner, name)).status).toBe(200);
  });
});
