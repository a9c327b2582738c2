import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as common from '../../src/schemas/common.ts';
import * as connections from '../../src/schemas/connections.ts';
import * as consoleSchemas from '../../src/schemas/console.ts';
import * as executor from '../../src/schemas/executor.ts';
import * as inference from '../../src/schemas/inference.ts';
import * as problem from '../../src/schemas/problem.ts';
import * as recordKinds from '../../src/schemas/record-kinds.ts';
import * as records from '../../src/schemas/records.ts';
import * as sessions from '../../src/schemas/sessions.ts';
import * as tenant from '../../src/schemas/tenant.ts';
import * as vendor from '../../src/schemas/vendor.ts';

const modules = {
  common,
  connections,
  console: consoleSchemas,
  executor,
  inference,
  problem,
  'record-kinds': recordKinds,
  records,
  sessions,
  tenant,
  vendor,
};

/** Every exported zod schema, named `module.Export`. */
const schemas: [string, z.ZodType][] = Object.entries(modules).flatMap(([file, exports]) =>
  Object.entries(exports)
    .filter((entry): entry is [string, z.ZodType] => entry[1] instanceof z.ZodType)
    .map(([name, schema]): [string, z.ZodType] => [`${file}.${name}`, schema]),
);

const idOf = (schema: z.ZodType): unknown => z.globalRegistry.get(schema)?.id;

interface JsonObject {
  properties?: Record<string, object>;
  $defs?: Record<string, JsonObject>;
}

/** The JSON Schema of a registered schema, which converts as a `$ref` into its `$defs`. */
function component(schema: z.ZodType, id: string): JsonObject {
  const json = z.toJSONSchema(schema) as JsonObject;
  return json.$defs?.[id] ?? json;
}

describe('JSON Schema of every exported schema', () => {
  it('finds the schemas it checks', () => {
    expect(schemas.length).toBeGreaterThan(90);
  });

  it.each(schemas)('%s converts for input and output', (_name, schema) => {
    for (const io of ['input', 'output'] as const) {
      const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io });
      expect(json.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    }
  });

  it('converts the whole registry the way the OpenAPI generator does', () => {
    for (const io of ['input', 'output'] as const) {
      const { schemas: components } = z.toJSONSchema(z.globalRegistry, {
        target: 'draft-2020-12',
        io,
        cycles: 'ref',
        reused: 'inline',
      });
      expect(Object.keys(components)).toEqual(
        expect.arrayContaining(['VendorDocument', 'TenantConfig', 'Problem', 'OfferedRecord']),
      );
    }
  });

  it('gives each registered id to exactly one schema', () => {
    const owners = new Map<unknown, string>();
    for (const [name, schema] of schemas) {
      const id = idOf(schema);
      if (id === undefined) continue;
      const owner = owners.get(id);
      // The same schema exported twice is one component; two schemas under one id are a clash.
      if (owner !== undefined) expect(z.globalRegistry._idmap.get(id as string), name).toBe(schema);
      owners.set(id, name);
      expect(z.globalRegistry._idmap.get(id as string), name).toBe(schema);
    }
    expect(owners.size).toBeGreaterThan(60);
  });

  it('keeps ids off query and path schemas so they list as parameters', () => {
    // `SamplingParams` is the `params` member of a body, not a path.
    const parts = schemas.filter(
      ([name]) => /(Query|Params)$/.test(name) && name !== 'sessions.SamplingParams',
    );
    expect(parts.length).toBeGreaterThanOrEqual(8);
    for (const [name, schema] of parts) {
      expect(idOf(schema), name).toBeUndefined();
      expect(z.toJSONSchema(schema, { io: 'input' }).type, name).toBe('object');
    }
  });

  it('names bodies and answers as components', () => {
    const named = schemas.filter(([name]) => /(Body|Answer|Page|Problem|Document)$/.test(name));
    expect(named.length).toBeGreaterThan(30);
    for (const [name, schema] of named) expect(idOf(schema), name).toEqual(expect.any(String));
  });

  it('writes int32 and int64 bounds where the interface says so', () => {
    const kind = component(records.Kind, 'Kind');
    expect(kind.properties?.version).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 2 ** 31 - 1,
    });
    const envelope = component(records.Envelope, 'Envelope');
    expect(envelope.properties?.at).toMatchObject({
      type: 'integer',
      maximum: Number.MAX_SAFE_INTEGER,
    });
    expect(envelope.properties?.size).toMatchObject({ type: 'integer', maximum: 2 ** 31 - 1 });
  });

  it('reads query integers as patterned strings in and integers out', () => {
    const input = z.toJSONSchema(sessions.ListSessionsQuery, { io: 'input' }) as {
      properties: Record<string, object>;
    };
    const output = z.toJSONSchema(sessions.ListSessionsQuery, { io: 'output' }) as {
      properties: Record<string, object>;
    };
    expect(input.properties.limit).toMatchObject({ type: 'string', default: 50 });
    expect(output.properties.limit).toMatchObject({ type: 'integer', minimum: 1 });
  });
});
