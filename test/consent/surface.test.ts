import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkConfig } from '../../src/consent/surface.ts';
import type { ConnectionValue, InferenceValue } from '../../src/resources/types.ts';
import type { ControlStore } from '../../src/storage/control-store.ts';
import { openSqliteControlStore } from '../../src/storage/sql/open.ts';
import { TenantConfig } from '../../src/schemas/tenant.ts';
import { VendorDocument } from '../../src/schemas/vendor.ts';

let folder: string;
let store: ControlStore;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'surface-'));
  store = await openSqliteControlStore({
    file: path.join(folder, 'service.sqlite'),
    secretsKey: randomBytes(32),
  });
});
afterAll(async () => {
  await store.close();
  await rm(folder, { recursive: true, force: true });
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

function option(credential: string | null): InferenceValue {
  return {
    provider: 'simulated',
    compact_at: 100_000,
    retry: { attempts: 3, backoff: '1s' },
    credential,
  };
}

function connection(name: string, catalog: boolean, credential?: string): ConnectionValue {
  return {
    name,
    endpoint: 'http://127.0.0.1:9/mcp',
    auth: credential === undefined ? { kind: 'none' } : { kind: 'bearer', credential },
    catalog: catalog
      ? {
          tools: [
            {
              name: 'read_file',
              inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
            },
            {
              name: 'grep',
              inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
            },
          ],
          digest: 'a'.repeat(64),
          captured: 1,
        }
      : null,
    state: catalog ? 'linked' : 'authorizing',
    result_limit: null,
    timeout: null,
    return_to: null,
    authorize: null,
  };
}

/** A tenant with options `plain` and `keyed` (secret `k` held), and connections. */
async function tenant(): Promise<string> {
  const id = `t-${randomUUID().slice(0, 8)}`;
  await store.putSecretValue(id, 'k', 'secret value');
  await store.write([
    { op: 'put', kind: 'inference', scope: id, id: 'plain', value: option(null), expect: 0 },
    { op: 'put', kind: 'inference', scope: id, id: 'keyed', value: option('k'), expect: 0 },
    { op: 'put', kind: 'inference', scope: id, id: 'orphan', value: option('gone'), expect: 0 },
    {
      op: 'put',
      kind: 'connection',
      scope: id,
      id: 'tools',
      value: connection('tools', true),
      expect: 0,
    },
    {
      op: 'put',
      kind: 'connection',
      scope: id,
      id: 'files',
      value: connection('files', true),
      expect: 0,
    },
    {
      op: 'put',
      kind: 'connection',
      scope: id,
      id: 'waiting',
      value: connection('waiting', false),
      expect: 0,
    },
    {
      op: 'put',
      kind: 'connection',
      scope: id,
      id: 'keyless',
      value: connection('keyless', true, 'gone'),
      expect: 0,
    },
  ]);
  return id;
}

const check = async (id: string, config: unknown) =>
  checkConfig(store, id, vendor, TenantConfig.parse(config));

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
        { connection: 'keyless', tool: 'grep' },
      ],
    });
    expect(unresolved?.code).toBe('unresolved_reference');
    expect(unresolved?.field).toBe('body.inference');
    expect(unresolved?.errors?.map((e) => e.field)).toEqual([
      'body.inference',
      'body.extra_tools.0.connection',
      'body.extra_tools.1.tool',
      'body.extra_tools.2.tool',
      'body.extra_tools.3.connection',
    ]);
    expect(unresolved?.errors?.[3]?.reason).toMatch(/no catalog until it is authorized/);
  });

  it('refuses an option whose credential the tenant no longer holds', async () => {
    const { unresolved } = await check(await tenant(), { inference: 'orphan' });
    expect(unresolved).toMatchObject({ field: 'body.inference' });
    expect(unresolved?.reason).toMatch(/credential gone/);
  });

  it('does not resolve another tenant’s option or connection', async () => {
    const mine = await tenant();
    const theirs = `t-${randomUUID().slice(0, 8)}`;
    await store.write([
      {
        op: 'put',
        kind: 'inference',
        scope: theirs,
        id: 'only-theirs',
        value: option(null),
        expect: 0,
      },
    ]);
    expect((await check(mine, { inference: 'only-theirs' })).unresolved?.field).toBe(
      'body.inference',
    );
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
