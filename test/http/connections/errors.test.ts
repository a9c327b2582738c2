import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner, type ConsoleUser } from '../../support/console.ts';
import { flowOf } from '../../support/flow.ts';
import { startEverything, type EverythingServer } from '../../mcp/peers/everything.ts';
import { freePort } from '../../mcp/peers/loopback.ts';
import { startPagingServer, sampleTools, type PagingServer } from '../../mcp/peers/paging.ts';
import {
  ConsoleClient,
  expectOk,
  expectProblem,
  oneMember,
  type Caller,
} from '../console/console-client.ts';

let harness: TestApp;
let client: ConsoleClient;
let everything: EverythingServer;
let looping: PagingServer;
beforeAll(async () => {
  [harness, everything, looping] = await Promise.all([
    startTestApp(),
    startEverything(),
    startPagingServer(sampleTools(3), 2),
  ]);
  looping.setMode('loop');
  client = await ConsoleClient.of(harness);
});
afterAll(async () => {
  await Promise.all([harness.close(), everything.close(), looping.close()]);
});

const nobody: Caller = { headers: {} };
const put = (caller: Caller, id: string, payload: unknown) =>
  client.call({ method: 'PUT', url: `/connections/${id}`, headers: caller.headers, payload });
const get = (caller: Caller, id: string) =>
  client.call({ method: 'GET', url: `/connections/${id}`, headers: caller.headers });
const remove = (caller: Caller, id: string) =>
  client.call({ method: 'DELETE', url: `/connections/${id}`, headers: caller.headers });
const authorize = (caller: Caller, id: string) =>
  client.call({ method: 'POST', url: `/connections/${id}/authorize`, headers: caller.headers });

async function storeSecret(owner: ConsoleUser, name: string, value: string) {
  const answer = await client.call({
    method: 'PUT',
    url: `/secrets/${name}`,
    headers: owner.headers,
    payload: { value },
  });
  expectOk(answer, 201);
}

describe('section 7 for the connection routes', () => {
  let owner: ConsoleUser;
  let member: ConsoleUser;
  beforeAll(async () => {
    owner = await newOwner(harness);
    member = await oneMember(harness, owner);
    expectOk(await put(owner, 'kept', { name: 'kept', endpoint: everything.endpoint }), 201);
  });

  it('answers 400 for an invalid body, naming the field', async () => {
    expectProblem(
      await put(owner, 'x', { name: 'x', endpoint: 'ftp://example.test/mcp' }),
      400,
      'invalid_request',
      'body.endpoint',
    );
    expectProblem(await put(owner, 'x', { name: 'x' }), 400, 'invalid_request', 'body.endpoint');
    expectProblem(
      await put(owner, 'x', { name: 'x', endpoint: everything.endpoint, timeout: 'soon' }),
      400,
      'invalid_request',
      'body.timeout',
    );
  });

  it('answers 400 for an empty name, a name that is not the path id, and a reserved name', async () => {
    expectProblem(
      await put(owner, 'x', { name: '', endpoint: everything.endpoint }),
      400,
      'invalid_request',
      'body.name',
    );
    expectProblem(
      await put(owner, 'x', { name: 'y', endpoint: everything.endpoint }),
      400,
      'name_mismatch',
      'body.name',
    );
    expectProblem(
      await put(owner, 'callback', { name: 'callback', endpoint: everything.endpoint }),
      400,
      'reserved_name',
      'body.name',
    );
  });

  it('answers 400 for a credential that names no secret of the tenant', async () => {
    const other = await newOwner(harness);
    await storeSecret(other, 'theirs', 'their-value');
    expectProblem(
      await put(owner, 'x', { name: 'x', endpoint: everything.endpoint, credential: 'theirs' }),
      400,
      'unknown_secret',
      'body.credential',
    );
  });

  it('answers 400 for a return_to off the allowlisted origins (no open redirect)', async () => {
    for (const returnTo of ['https://evil.example.test/', 'javascript:alert(1)']) {
      expectProblem(
        await put(owner, 'x', { name: 'x', endpoint: everything.endpoint, return_to: returnTo }),
        400,
        'return_to_not_allowed',
        'body.return_to',
      );
    }
  });

  it('answers 401 without a console token, or with one that does not verify', async () => {
    const body = { name: 'x', endpoint: everything.endpoint };
    expectProblem(await put(nobody, 'x', body), 401, 'unauthenticated');
    expectProblem(
      await put({ headers: { authorization: 'Bearer nope' } }, 'x', body),
      401,
      'invalid_token',
    );
    expectProblem(await get(nobody, 'kept'), 401, 'unauthenticated');
    expectProblem(await remove(nobody, 'kept'), 401, 'unauthenticated');
    expectProblem(await authorize(nobody, 'kept'), 401, 'unauthenticated');
    expectProblem(
      await client.call({ method: 'GET', url: '/connections', headers: {} }),
      401,
      'unauthenticated',
    );
  });

  it('lets members read but only owners write (403 not_owner)', async () => {
    expectOk(await get(member, 'kept'), 200);
    expectProblem(
      await put(member, 'kept', { name: 'kept', endpoint: everything.endpoint }),
      403,
      'not_owner',
    );
    expectProblem(await remove(member, 'kept'), 403, 'not_owner');
    expectProblem(await authorize(member, 'kept'), 403, 'not_owner');
  });

  it('answers 404 for a connection the tenant does not own', async () => {
    const other = await newOwner(harness);
    expectProblem(await get(other, 'kept'), 404, 'connection_not_found');
    expectProblem(await remove(other, 'kept'), 404, 'connection_not_found');
    expectProblem(await authorize(other, 'kept'), 404, 'connection_not_found');
    expectProblem(await get(owner, 'Not_A_Name'), 404, 'connection_not_found');
  });

  it('answers 502 when the server cannot be reached or read, and changes nothing', async () => {
    const before = await harness.stores.control.get('connection', owner.tenant, 'kept');
    const closed = `http://127.0.0.1:${await freePort()}/mcp`;
    const unreachable = await put(owner, 'kept', { name: 'kept', endpoint: closed });
    expectProblem(unreachable, 502, 'upstream_unreachable');
    expect((unreachable.body as { message: string }).message).toContain(closed);
    expectProblem(
      await put(owner, 'kept', { name: 'kept', endpoint: looping.endpoint }),
      502,
      'upstream_unreadable',
    );
    expectProblem(
      await put(owner, 'fresh', { name: 'fresh', endpoint: closed }),
      502,
      'upstream_unreachable',
    );
    expect(await harness.stores.control.get('connection', owner.tenant, 'kept')).toEqual(before);
    expectProblem(await get(owner, 'fresh'), 404, 'connection_not_found');
  });

  it('answers 409 to POST …/authorize for a connection that does not use OAuth', async () => {
    expectProblem(await authorize(owner, 'kept'), 409, 'not_oauth');
  });

  it('answers 409 with the installs while installs use the connection, then deletes', async () => {
    expectOk(await put(owner, 'used', { name: 'used', endpoint: everything.endpoint }), 201);
    // Two installs consent to a tool of it; one of them is deleted since.
    const flow = flowOf(harness);
    const config = { extra_tools: [{ connection: 'used', tool: 'echo' }] };
    const { id: install } = await flow.install({ owner, config });
    const gone = await flow.install({ owner, config });
    await flow.expect(204, 'DELETE', `/installs/${gone.id}`, owner.token);
    const refused = await remove(owner, 'used');
    expectProblem(refused, 409, 'connection_in_use');
    expect(refused.body).toMatchObject({ installs: [install] });
    expectOk(await get(owner, 'used'), 200);

    await flow.expect(204, 'DELETE', `/installs/${install}`, owner.token);
    expect((await remove(owner, 'used')).status).toBe(204);
    expectProblem(await get(owner, 'used'), 404, 'connection_not_found');
  });

  it('answers 400 to a callback without a usable state', async () => {
    const call = (query: string) =>
      client.call({ method: 'GET', url: `/connections/callback${query}` });
    expectProblem(await call('?code=abc'), 400, 'invalid_state', 'query.state');
    expectProblem(await call('?code=abc&state=unknown'), 400, 'invalid_state', 'query.state');
    expectProblem(await call('?state=unknown'), 400, 'invalid_request', 'query.code');
  });
});
