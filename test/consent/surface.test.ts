/**
 * `checkConfig` (decisions row 93) against tenants set up the way owners set them up: a
 * secret, inference options and connections made over the console API, the connections
 * linked to real MCP servers on loopback (one of them demanding OAuth, so it waits for
 * authorization). The API never lets a secret go while an option or connection names it
 * (2.18), so "a credential gone" is no state a tenant can reach and is not set up here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkConfig } from '../../src/consent/surface.ts';
import { TenantConfig } from '../../src/schemas/tenant.ts';
import { VendorDocument } from '../../src/schemas/vendor.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { flowOf } from '../support/flow.ts';
import { startOAuthServer, type OAuthServer } from '../mcp/peers/oauth-server.ts';
import { startPagingServer, type PagingServer } from '../mcp/peers/paging.ts';

let harness: TestApp;
let tools: PagingServer;
let guarded: OAuthServer;

beforeAll(async () => {
  harness = await startTestApp();
  tools = await startPagingServer(
    [
      {
        name: 'read_file',
        inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
      },
      { name: 'grep', inputSchema: { type: 'object', properties: { n: { type: 'number' } } } },
    ],
    10,
  );
  guarded = await startOAuthServer();
});
afterAll(async () => {
  await Promise.all([tools.close(), guarded.close()]);
  await harness.close();
});

const vendor = VendorDocument.parse({
  appdoc: 1,
  name: 'App',
  description: '',
  tools: [
    {
      name: 'search',
      description: '',
      input_schema: { type: 'object', properties: { query: { type: 'string' } } },
      output_schema: { type: 'object' },
    },
    {
      // Row 27: a vendor tool that takes the model-visible name of an extra tool.
      name: 'files__read_file',
      description: '',
      input_schema: { type: 'object', properties: {} },
      output_schema: { type: 'object' },
    },
  ],
});

/**
 * A tenant with options `plain` and `keyed` (secret `k` held), connections `tools` and
 * `files` (read_file, grep) and `waiting` (authorizing).
 */
async function tenant(): Promise<string> {
  const flow = flowOf(harness);
  const owner = await flow.owner();
  await flow.expect(201, 'PUT', '/secrets/k', owner.token, { value: 'secret value' });
  await flow.option(owner, 'plain');
  await flow.option(owner, 'keyed', { credential: 'k' });
  await flow.link(owner, 'tools', tools.endpoint);
  await flow.link(owner, 'files', tools.endpoint);
  const waiting = await flow.link(owner, 'waiting', guarded.endpoint);
  expect(waiting).toMatchObject({ connection: { state: 'authorizing' } });
  return owner.tenant;
}

const check = async (id: string, config: unknown) =>
  checkConfig(harness.stores.control, id, vendor, TenantConfig.parse(config));

describe('checkConfig (decisions row 93)', () => {
  it('accepts a config whose references are the tenant’s and whose policies fit', async () => {
    const id = await tenant();
    const result = await check(id, {
      inference: 'keyed',
      extra_tools: [{ connection: 'tools', tool: 'grep' }],
      policies: [
        {
          tool: 'tools__grep',
          items: [{ arg: 'n', effect: 'deny', op: 'gt', operand: { value: 3 } }],
        },
        { tool: 'search', project: ['query'] },
      ],
    });
    expect(result).toEqual({ unresolved: null, unfit: null });
  });

  it('refuses references the tenant does not own, naming each field', async () => {
    const id = await tenant();
    const { unresolved } = await check(id, {
      inference: 'missing',
      extra_tools: [
        { connection: 'nope', tool: 'x' },
        { connection: 'tools', tool: 'absent' },
        { connection: 'waiting', tool: 'read_file' },
      ],
    });
    expect(unresolved?.code).toBe('unresolved_reference');
    expect(unresolved?.field).toBe('body.inference');
    expect(unresolved?.errors?.map((e) => e.field)).toEqual([
      'body.inference',
      'body.extra_tools.0.connection',
      'body.extra_tools.1.tool',
      'body.extra_tools.2.tool',
    ]);
    expect(unresolved?.errors?.[3]?.reason).toMatch(/no catalog until it is authorized/);
  });

  it('does not resolve another tenant’s option or connection', async () => {
    const mine = await tenant();
    const flow = flowOf(harness);
    const theirs = await flow.owner();
    await flow.option(theirs, 'only-theirs');
    await flow.link(theirs, 'their-tools', tools.endpoint);
    expect((await check(mine, { inference: 'only-theirs' })).unresolved?.field).toBe(
      'body.inference',
    );
    const connection = {
      inference: 'plain',
      extra_tools: [{ connection: 'their-tools', tool: 'grep' }],
    };
    expect((await check(mine, connection)).unresolved?.field).toBe('body.extra_tools.0.connection');
  });

  it('refuses an extra tool seen under a vendor tool’s name (row 27)', async () => {
    const { unfit } = await check(await tenant(), {
      inference: 'plain',
      extra_tools: [{ connection: 'files', tool: 'read_file' }],
    });
    expect(unfit).toMatchObject({ code: 'tool_name_clash', field: 'body.extra_tools.0' });
  });

  it('refuses a policy that does not compile, under body.policies', async () => {
    const { unresolved, unfit } = await check(await tenant(), {
      inference: 'plain',
      policies: [
        {
          tool: 'search',
          items: [{ arg: 'nope', effect: 'deny', op: 'is', operand: { value: 1 } }],
        },
        { tool: 'tools__grep' },
      ],
    });
    expect(unresolved).toBeNull();
    expect(unfit?.code).toBe('invalid_policy');
    expect(unfit?.errors?.map((e) => e.field)).toEqual([
      'body.policies.0.items.0.arg',
      'body.policies.1.tool',
    ]);
  });
});
