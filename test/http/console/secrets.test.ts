import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner, setMembers } from '../../support/console.ts';
import { flowOf, type Owner } from '../../support/flow.ts';
import { sampleTools, startPagingServer, type PagingServer } from '../../mcp/peers/paging.ts';
import {
  ConsoleClient,
  expectOk,
  expectProblem,
  oneMember,
  type Caller,
} from './console-client.ts';

let harness: TestApp;
let client: ConsoleClient;
/** The MCP server the connections of these tests link to. */
let tools: PagingServer;
/** Every secret value a test stored: none may ever appear in an answer or the log. */
const values: string[] = [];

beforeAll(async () => {
  harness = await startTestApp();
  client = await ConsoleClient.of(harness);
  tools = await startPagingServer(sampleTools(2), 10);
});
afterAll(async () => {
  await tools.close();
  await harness.close();
});

function secretValue(): string {
  const value = `sv-${randomUUID()}`;
  values.push(value);
  return value;
}

const freshName = () => `s-${randomUUID().slice(0, 8)}`;

function put(caller: Caller, name: string, payload: unknown) {
  return client.call({ method: 'PUT', url: `/secrets/${name}`, headers: caller.headers, payload });
}
function list(caller: Caller) {
  return client.call({ method: 'GET', url: '/secrets', headers: caller.headers });
}
function remove(caller: Caller, name: string) {
  return client.call({ method: 'DELETE', url: `/secrets/${name}`, headers: caller.headers });
}

/** The owner links `connection` to the test MCP server, sending `secret` as its bearer. */
async function connectionUsing(owner: Owner, connection: string, secret: string) {
  await flowOf(harness).link(owner, connection, tools.endpoint, { credential: secret });
}

describe('PUT /secrets/{id}', () => {
  it('answers created, then unchanged for the same value, then replaced', async () => {
    const owner = await newOwner(harness);
    const name = freshName();
    const first = secretValue();
    expect(expectOk(await put(owner, name, { value: first }), 201)).toEqual({ outcome: 'created' });
    const stored = await harness.stores.control.get('secret', owner.tenant, name);
    expect(expectOk(await put(owner, name, { value: first }), 200)).toEqual({
      outcome: 'unchanged',
    });
    expect(await harness.stores.control.get('secret', owner.tenant, name)).toEqual(stored);
    const second = secretValue();
    expect(expectOk(await put(owner, name, { value: second }), 200)).toEqual({
      outcome: 'replaced',
    });
    // The service holds the value (sealed at rest) for its own use.
    expect(await harness.stores.control.readSecretValue(owner.tenant, name)).toBe(second);
  });

  it('refuses a member that is not an owner, and a user of another tenant, with 403', async () => {
    const owner = await newOwner(harness);
    const member = await oneMember(harness, owner);
    const name = freshName();
    expectProblem(await put(member, name, { value: secretValue() }), 403, 'not_owner');
    expect(await harness.stores.control.get('secret', owner.tenant, name)).toBeNull();
  });

  it('refuses a bad name or body with 400 naming the field, before the credential, and an oversized body with 413', async () => {
    expectProblem(
      await put({ headers: {} }, 'bad name!', { value: 'x' }),
      400,
      'invalid_request',
      'params.id',
    );
    expectProblem(
      await put({ headers: {} }, freshName(), { value: '' }),
      400,
      'invalid_request',
      'body.value',
    );
    expectProblem(
      await put({ headers: {} }, freshName(), {}),
      400,
      'invalid_request',
      'body.value',
    );
    const owner = await newOwner(harness);
    expectProblem(
      await put(owner, freshName(), { value: 'x'.repeat(harness.bodyLimit) }),
      413,
      'payload_too_large',
      'body',
    );
  });

  it('refuses a missing console token with 401', async () => {
    expectProblem(
      await put({ headers: {} }, freshName(), { value: secretValue() }),
      401,
      'unauthenticated',
    );
  });
});

describe('GET /secrets', () => {
  it('lists names and times for members, never values', async () => {
    const owner = await newOwner(harness);
    const member = await oneMember(harness, owner);
    const [a, b] = [`a-${randomUUID().slice(0, 6)}`, `b-${randomUUID().slice(0, 6)}`];
    await put(owner, b, { value: secretValue() });
    await put(owner, a, { value: secretValue() });
    for (const caller of [owner, member]) {
      const rows = expectOk(await list(caller), 200) as {
        name: string;
        created: number;
        updated: number;
      }[];
      expect(rows.map((row) => row.name)).toEqual([a, b]);
      for (const row of rows)
        expect(Object.keys(row).sort()).toEqual(['created', 'name', 'updated']);
    }
  });

  it('refuses a user who is no longer a member, and no token, with 401', async () => {
    const owner = await newOwner(harness);
    const removed = await oneMember(harness, owner);
    await setMembers(harness, owner, []);
    // The token stood on the membership, which is gone.
    expectProblem(await list(removed), 401, 'invalid_token');
    expectProblem(await list({ headers: {} }), 401, 'unauthenticated');
  });
});

describe('DELETE /secrets/{id}', () => {
  it('deletes a secret and its value, answering 204 and then 404', async () => {
    const owner = await newOwner(harness);
    const name = freshName();
    await put(owner, name, { value: secretValue() });
    const deleted = await remove(owner, name);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(await harness.stores.control.readSecretValue(owner.tenant, name)).toBeNull();
    expectProblem(await remove(owner, name), 404, 'secret_not_found');
    expect(expectOk(await list(owner), 200)).toEqual([]);
  });

  it('refuses while inference options or connections name the secret (2.18), then deletes', async () => {
    const owner = await newOwner(harness);
    const name = freshName();
    await put(owner, name, { value: secretValue() });
    const option = `o-${randomUUID().slice(0, 8)}`;
    expectOk(
      await client.call({
        method: 'PUT',
        url: `/inferences/${option}`,
        headers: owner.headers,
        payload: { provider: 'simulated', credential: name },
      }),
      201,
    );
    await connectionUsing(owner, 'docs', name);
    const refused = await remove(owner, name);
    expectProblem(refused, 409, 'secret_in_use');
    expect(refused.body).toMatchObject({ inferences: [option], connections: ['docs'] });
    expect(typeof (refused.body as { message: unknown }).message).toBe('string');

    await flowOf(harness).expect(204, 'DELETE', '/connections/docs', owner.token);
    const stillNamed = await remove(owner, name);
    expectProblem(stillNamed, 409, 'secret_in_use');
    expect(stillNamed.body).toMatchObject({ inferences: [option], connections: [] });

    // Pointing the option elsewhere frees the secret.
    await client.call({
      method: 'PUT',
      url: `/inferences/${option}`,
      headers: owner.headers,
      payload: { provider: 'simulated' },
    });
    expect((await remove(owner, name)).status).toBe(204);
  });

  it('refuses a member that is not an owner with 403, keeping the secret', async () => {
    const owner = await newOwner(harness);
    const member = await oneMember(harness, owner);
    const name = freshName();
    await put(owner, name, { value: secretValue() });
    expectProblem(await remove(member, name), 403, 'not_owner');
    // 403 comes before 404: a member learns nothing about which names exist.
    expectProblem(await remove(member, freshName()), 403, 'not_owner');
    expect(await harness.stores.control.get('secret', owner.tenant, name)).not.toBeNull();
  });

  it('refuses a missing console token with 401', async () => {
    expectProblem(await remove({ headers: {} }, freshName()), 401, 'unauthenticated');
  });
});

describe('secret values', () => {
  it('never appear in an answer or a log line', () => {
    expect(values.length).toBeGreaterThan(5);
    const log = harness.logs.text();
    expect(log.length).toBeGreaterThan(0);
    for (const value of values) {
      expect(log).not.toContain(value);
      for (const text of client.texts) expect(text).not.toContain(value);
    }
  });
});
