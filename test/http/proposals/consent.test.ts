/**
 * `GET /consent/{request}` and `POST /consent/{request}` (4.3, 4.4, table 3.2, §7;
 * decisions rows 72, 83, 92 to 94): every section 7 condition sees its status and code.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../../src/clock.ts';
import type { TestApp } from '../../support/app.ts';
import { consoleToken, setMembers, type ConsoleUser } from '../../support/console.ts';
import type { OpenApiCheck } from '../../support/openapi-check.ts';
import type { PagingServer } from '../../mcp/peers/paging.ts';
import {
  conforms,
  consent,
  flowApp,
  openApi,
  ownerWithOption,
  poll,
  propose,
  linkConnection,
  startToolServer,
  vendorDoc,
  installFor,
  proposeUpdate,
} from './flow-client.ts';

let harness: TestApp;
let clock: ManualClock;
let check: OpenApiCheck;
let server: PagingServer;

beforeAll(async () => {
  ({ harness, clock } = await flowApp());
  check = await openApi(harness);
  server = await startToolServer();
});
afterAll(async () => {
  await server.close();
  await harness.close();
});

const read = (user: ConsoleUser | null, request: string) =>
  harness.app.inject({
    method: 'GET',
    url: `/consent/${request}`,
    headers: user === null ? {} : user.headers,
  });

/** An owner with the option `fast`, and a plain member of the same tenant. */
async function team(): Promise<{ owner: ConsoleUser; member: ConsoleUser }> {
  const owner = await ownerWithOption(harness);
  const [member] = await setMembers(harness, owner, [
    { user: `m-${randomUUID()}`, role: 'member' },
  ]);
  if (member === undefined) throw new Error('no member');
  return { owner, member };
}

describe('GET /consent/{request}', () => {
  it('shows a member the proposal (row 72)', async () => {
    const { member } = await team();
    const doc = vendorDoc();
    const proposal = await propose(harness, doc);
    const response = await read(member, proposal.request);
    conforms(check, 'GET', `/consent/${proposal.request}`, response);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      request: proposal.request,
      state: 'pending',
      vendor: {
        ...doc,
        tools: [
          { ...(doc.tools as object[])[0], result_limit: null, timeout: null },
          (doc.tools as object[])[1],
        ],
      },
      hash: proposal.vendor,
      expires: proposal.expires,
      install: null,
    });
  });

  it('needs a console token (401) of a member (403)', async () => {
    const proposal = await propose(harness);
    const anonymous = await read(null, proposal.request);
    conforms(check, 'GET', `/consent/${proposal.request}`, anonymous);
    expect(anonymous.statusCode).toBe(401);
    const outsider = await consoleToken(
      harness,
      `u-${randomUUID()}`,
      `t-${randomUUID().slice(0, 8)}`,
    );
    const refused = await read(outsider, proposal.request);
    conforms(check, 'GET', `/consent/${proposal.request}`, refused);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'not_member' });
  });

  it('answers 404 for an unknown or lapsed request', async () => {
    const { member } = await team();
    const unknown = await read(member, 'rq_unknown');
    conforms(check, 'GET', '/consent/rq_unknown', unknown);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'no_such_request' });
    const proposal = await propose(harness);
    clock.advance(600_000);
    expect((await read(member, proposal.request)).statusCode).toBe(404);
  });

  it('serves the consent page to a browser, with a policy that allows nothing foreign', async () => {
    const proposal = await propose(harness);
    const page = await harness.app.inject({
      method: 'GET',
      url: new URL(proposal.consent_url).pathname,
      headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' },
    });
    conforms(check, 'GET', `/consent/${proposal.request}`, page);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(page.headers['content-security-policy']);
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(page.body).toContain(`<script nonce="${nonce ?? ''}">`);
    expect(page.body).not.toMatch(/<script[^>]+src=/);
    // The page carries nothing of the proposal: it reads it through the API once signed in.
    expect(page.body).not.toContain(proposal.request);
  });
});

describe('POST /consent/{request}', () => {
  it('needs a console token (401) of an owner (403), then a known request (404)', async () => {
    const { member, owner } = await team();
    const proposal = await propose(harness);
    const url = `/consent/${proposal.request}`;
    const anonymous = await harness.app.inject({
      method: 'POST',
      url,
      payload: { inference: 'fast' },
    });
    conforms(check, 'POST', url, anonymous);
    expect(anonymous.statusCode).toBe(401);
    const notOwner = await consent(harness, member, proposal.request, { inference: 'fast' });
    conforms(check, 'POST', url, notOwner);
    expect(notOwner.statusCode).toBe(403);
    expect(notOwner.json()).toMatchObject({ code: 'not_owner' });
    const unknown = await consent(harness, owner, 'rq_unknown', { inference: 'fast' });
    conforms(check, 'POST', '/consent/rq_unknown', unknown);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'no_such_request' });
  });

  it.each([
    ['a parse error', { inference: 42 }, 'invalid_request', 'body.inference'],
    [
      'an unknown inference option',
      { inference: 'slow' },
      'unresolved_reference',
      'body.inference',
    ],
    [
      'an unknown connection',
      { inference: 'fast', extra_tools: [{ connection: 'nope', tool: 'read_file' }] },
      'unresolved_reference',
      'body.extra_tools.0.connection',
    ],
    [
      'a tool the connection lacks',
      { inference: 'fast', extra_tools: [{ connection: 'files', tool: 'write_file' }] },
      'unresolved_reference',
      'body.extra_tools.0.tool',
    ],
    [
      'a policy on a tool nobody offers',
      { inference: 'fast', policies: [{ tool: 'files__read_file' }] },
      'invalid_policy',
      'body.policies.0.tool',
    ],
    [
      'a policy on an arg the tool lacks',
      {
        inference: 'fast',
        policies: [
          {
            tool: 'search',
            items: [{ arg: 'folder', effect: 'deny', op: 'is', operand: { value: 'x' } }],
          },
        ],
      },
      'invalid_policy',
      'body.policies.0.items.0.arg',
    ],
  ])('refuses %s with 400 naming the field, creating nothing', async (_, config, code, field) => {
    const { owner } = await team();
    await linkConnection(harness, owner, 'files', server.endpoint);
    const proposal = await propose(harness);
    const response = await consent(harness, owner, proposal.request, config);
    conforms(check, 'POST', `/consent/${proposal.request}`, response);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code, field });
    expect(await harness.stores.control.list('install', owner.tenant)).toEqual([]);
    // Still pending: a good consent goes through afterwards.
    expect(
      (await consent(harness, owner, proposal.request, { inference: 'fast' })).statusCode,
    ).toBe(200);
  });

  it('refuses an extra tool whose model-visible name is a vendor tool’s (row 27)', async () => {
    const { owner } = await team();
    await linkConnection(harness, owner, 'files', server.endpoint);
    const doc = vendorDoc();
    const tools = [
      ...(doc.tools as object[]),
      { ...(doc.tools as object[])[0], name: 'files__search' },
    ];
    const proposal = await propose(harness, { ...doc, tools });
    const response = await consent(harness, owner, proposal.request, {
      inference: 'fast',
      extra_tools: [{ connection: 'files', tool: 'search' }],
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ code: 'tool_name_clash', field: 'body.extra_tools.0' });
  });

  it('answers 409 already_granted with the install on a second consent, and 404 once lapsed', async () => {
    const { owner } = await team();
    const proposal = await propose(harness);
    const first = await consent(harness, owner, proposal.request, { inference: 'fast' });
    const { install } = first.json<{ install: string }>();
    const again = await consent(harness, owner, proposal.request, { inference: 'fast' });
    conforms(check, 'POST', `/consent/${proposal.request}`, again);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'already_granted', install });
    expect((await read(owner, proposal.request)).json()).toMatchObject({
      state: 'granted',
      install,
    });
    const lapsed = await propose(harness);
    clock.advance(600_000);
    const late = await consent(harness, owner, lapsed.request, { inference: 'fast' });
    conforms(check, 'POST', `/consent/${lapsed.request}`, late);
    expect(late.statusCode).toBe(404);
  });

  it('answers 404 install_gone to consent on an update whose install was deleted since', async () => {
    const { owner } = await team();
    const installed = await installFor(harness, owner);
    const { install } = installed;
    const update = await proposeUpdate(harness, installed);
    const { request } = update.json<{ request: string }>();
    const deleted = await harness.app.inject({
      method: 'DELETE',
      url: `/installs/${install}`,
      headers: owner.headers,
    });
    expect(deleted.statusCode).toBe(204);
    const refused = await consent(harness, owner, request, { inference: 'fast' });
    conforms(check, 'POST', `/consent/${request}`, refused);
    expect(refused.statusCode).toBe(404);
    expect(refused.json()).toMatchObject({ code: 'install_gone' });
    // Nothing was granted: the vendor keeps waiting until the proposal lapses.
    expect(
      (
        await poll(harness, {
          request,
          poll_secret: update.json<{ poll_secret: string }>().poll_secret,
        })
      ).json(),
    ).toMatchObject({ error: 'authorization_pending' });
  });

  it('lets only an owner of the install’s tenant consent to an update (row 94)', async () => {
    const { owner } = await team();
    const stranger = await ownerWithOption(harness);
    const installed = await installFor(harness, owner);
    const { install } = installed;
    const update = await proposeUpdate(harness, installed);
    const { request } = update.json<{ request: string }>();
    const refused = await consent(harness, stranger, request, { inference: 'fast' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'not_owner' });
    // The stranger reads neither the update nor the granted request.
    expect((await read(stranger, request)).statusCode).toBe(403);
    const granted = await read(stranger, installed.request);
    expect(granted.statusCode).toBe(403);
    expect(granted.body).not.toContain(install);
    expect((await consent(harness, owner, request, { inference: 'fast' })).json()).toEqual({
      install,
    });
  });
});
