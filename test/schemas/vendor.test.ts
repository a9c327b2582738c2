import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  ComposedDocument,
  ObjectSchema,
  VENDOR_BOUNDS,
  VendorDocument,
} from '../../src/schemas/vendor.ts';
import { accepted, refusals, withValue } from './refusals.ts';

const tool = (name: string) => ({
  name,
  description: `looks up ${name}`,
  input_schema: { type: 'object', properties: { q: { type: 'string' } } },
  output_schema: { type: 'object' },
});

const doc = () => ({
  appdoc: 1,
  name: `app-${randomUUID()}`,
  description: 'A test app.',
  tools: [tool('search'), tool('fetch')],
});

/** The one refusal of `doc()` with `path` set to `value`. */
const refusalAt = (path: (string | number)[], value: unknown) =>
  refusals(VendorDocument, withValue(doc(), path, value));

/** An object schema whose JSON text is exactly `bytes` long. */
function schemaOfBytes(bytes: number): Record<string, unknown> {
  const shell = JSON.stringify({ type: 'object', description: '' }).length;
  return { type: 'object', description: 'x'.repeat(bytes - shell) };
}

describe('vendor document (2.5, decisions rows 15 to 22)', () => {
  it('takes a document and fills the tool defaults (rows 17, 18)', () => {
    const parsed = accepted(VendorDocument, doc());
    expect(parsed.tools[0]).toMatchObject({ result_limit: null, timeout: null });
  });

  it('takes appdoc 1 only (row 22)', () => {
    expect(refusalAt(['appdoc'], 2)).toEqual([
      { field: 'body.appdoc', reason: 'must be 1, the only accepted version' },
    ]);
    expect(refusalAt(['appdoc'], undefined)).toEqual([
      { field: 'body.appdoc', reason: 'is required' },
    ]);
  });

  it('bounds the name at 128 characters and refuses it empty', () => {
    expect(refusalAt(['name'], 'n'.repeat(128))).toEqual([]);
    expect(refusalAt(['name'], 'n'.repeat(129))).toEqual([
      { field: 'body.name', reason: 'must be at most 128 characters' },
    ]);
    expect(refusalAt(['name'], '')).toEqual([{ field: 'body.name', reason: 'must not be empty' }]);
  });

  it('bounds descriptions at 4096 characters', () => {
    expect(refusalAt(['description'], 'd'.repeat(4096))).toEqual([]);
    expect(refusalAt(['description'], 'd'.repeat(4097))).toEqual([
      { field: 'body.description', reason: 'must be at most 4096 characters' },
    ]);
    expect(refusalAt(['tools', 1, 'description'], 'd'.repeat(4097))).toEqual([
      { field: 'body.tools.1.description', reason: 'must be at most 4096 characters' },
    ]);
  });

  it('takes 128 tools and refuses 129', () => {
    const tools = Array.from({ length: VENDOR_BOUNDS.tools + 1 }, (_, i) => tool(`t${i}`));
    expect(refusalAt(['tools'], tools.slice(0, 128))).toEqual([]);
    expect(refusalAt(['tools'], tools)).toEqual([
      { field: 'body.tools', reason: 'must hold at most 128 tools' },
    ]);
  });

  it('holds tool names to the function-name rule (row 19)', () => {
    expect(refusalAt(['tools', 0, 'name'], `A-z_9${'x'.repeat(59)}`)).toEqual([]);
    const reason = 'must be 1 to 64 characters of A-Z, a-z, 0-9, _ and -';
    for (const name of ['x'.repeat(65), '', 'has space', 'dot.ted', 'ünï']) {
      expect(refusalAt(['tools', 0, 'name'], name)).toEqual([
        { field: 'body.tools.0.name', reason },
      ]);
    }
  });

  it('refuses a second tool of one name, naming the duplicate', () => {
    expect(refusalAt(['tools', 1, 'name'], 'search')).toEqual([
      { field: 'body.tools.1.name', reason: 'duplicates the tool name search' },
    ]);
  });

  it('takes only object schemas (row 16)', () => {
    const reason = 'must be "object": tool arguments and results are objects';
    expect(refusalAt(['tools', 0, 'input_schema'], { type: 'array' })).toEqual([
      { field: 'body.tools.0.input_schema.type', reason },
    ]);
    expect(refusalAt(['tools', 0, 'output_schema'], {})).toEqual([
      { field: 'body.tools.0.output_schema.type', reason: 'is required' },
    ]);
    expect(refusalAt(['tools', 0, 'input_schema'], 'object')).toEqual([
      { field: 'body.tools.0.input_schema', reason: 'must be an object' },
    ]);
  });

  it('takes a schema of 64 KiB serialized and refuses one byte more (row 20)', () => {
    expect(JSON.stringify(schemaOfBytes(65_536))).toHaveLength(65_536);
    expect(refusals(ObjectSchema, schemaOfBytes(65_536))).toEqual([]);
    expect(refusalAt(['tools', 0, 'input_schema'], schemaOfBytes(65_537))).toEqual([
      { field: 'body.tools.0.input_schema', reason: 'must be at most 65536 bytes serialized' },
    ]);
  });

  it('bounds result_limit at 1 byte to 1 MiB (row 17)', () => {
    expect(refusalAt(['tools', 0, 'result_limit'], 1)).toEqual([]);
    expect(refusalAt(['tools', 0, 'result_limit'], 1_048_576)).toEqual([]);
    expect(refusalAt(['tools', 0, 'result_limit'], null)).toEqual([]);
    const reason = 'must be 1 to 1048576 bytes';
    expect(refusalAt(['tools', 0, 'result_limit'], 0)).toEqual([
      { field: 'body.tools.0.result_limit', reason },
    ]);
    expect(refusalAt(['tools', 0, 'result_limit'], 1_048_577)).toEqual([
      { field: 'body.tools.0.result_limit', reason },
    ]);
    expect(refusalAt(['tools', 0, 'result_limit'], 2.5)).toEqual([
      { field: 'body.tools.0.result_limit', reason: 'must be an integer number of bytes' },
    ]);
  });

  it('bounds timeout at 1s to 15m (row 18)', () => {
    expect(refusalAt(['tools', 0, 'timeout'], '1s')).toEqual([]);
    expect(refusalAt(['tools', 0, 'timeout'], '15m')).toEqual([]);
    const reason = 'must be a duration from 1s to 15m';
    expect(refusalAt(['tools', 0, 'timeout'], '999ms')).toEqual([
      { field: 'body.tools.0.timeout', reason },
    ]);
    expect(refusalAt(['tools', 0, 'timeout'], '901s')).toEqual([
      { field: 'body.tools.0.timeout', reason },
    ]);
  });

  it('names every failed field at once', () => {
    const bad = withValue(withValue(doc(), ['name'], ''), ['tools', 1, 'name'], 'a b');
    expect(refusals(VendorDocument, bad).map((r) => r.field)).toEqual([
      'body.name',
      'body.tools.1.name',
    ]);
  });
});

describe('composed document (2.7)', () => {
  it('reads the vendor document beside the tenant config and install', () => {
    const composed = {
      install: { id: 'in_1', tenant: 't_1', vendor: 'a'.repeat(64), created: 1, updated: 2 },
      tenant: { inference: 'default' },
      vendor: doc(),
    };
    const parsed = accepted(ComposedDocument, composed);
    expect(parsed.tenant).toEqual({ inference: 'default', extra_tools: [], policies: [] });
    expect(refusals(ComposedDocument, { ...composed, install: null })).toEqual([]);
  });
});
