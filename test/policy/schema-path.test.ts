import { describe, expect, it } from 'vitest';
import { resolveArg } from '../../src/policy/schema-path.ts';

const schema = {
  type: 'object',
  properties: {
    plain: { type: 'integer' },
    multi: { type: ['number', 'null', 7] },
    picked: { enum: ['x', 'y'], const: 'x' },
    listed: { enum: [1, { a: 1 }] },
    slashed: { $ref: '#/$defs/a~1b' },
    tilde: { $ref: '#/$defs/c~0d' },
    encoded: { $ref: '#/$defs/with%20space' },
    indexed: { $ref: '#/$defs/tuple/1' },
    remote: { $ref: 'https://example.com/schema.json' },
    broken: { $ref: '#/$defs/missing' },
    badly: { $ref: '#/%E0%A4%A' },
    cycle: { $ref: '#/$defs/loop' },
    flag: true,
    viaRef: { $ref: '#/$defs/object' },
  },
  $defs: {
    'a/b': { type: 'string' },
    'c~d': { type: 'boolean' },
    'with space': { type: 'null' },
    tuple: [{ type: 'string' }, { type: 'number' }],
    loop: { $ref: '#/$defs/loop' },
    object: { type: 'object', properties: { inner: { const: null } } },
  },
};

describe('resolveArg', () => {
  it.each<[string, readonly string[] | null, readonly unknown[] | null]>([
    ['plain', ['integer'], null],
    ['multi', ['number', 'null'], null],
    ['picked', null, ['x']],
    ['listed', null, [1, { a: 1 }]],
    ['slashed', ['string'], null],
    ['tilde', ['boolean'], null],
    ['encoded', ['null'], null],
    ['indexed', ['number'], null],
    ['remote', null, null],
    ['broken', null, null],
    ['badly', null, null],
    ['cycle', null, null],
    ['flag', null, null],
    ['viaRef.inner', null, [null]],
  ])('reads what the schema declares about %s', (arg, types, values) => {
    expect(resolveArg(schema, arg)).toEqual({ ok: true, shape: { types, values } });
  });

  it('walks a root that is itself a $ref', () => {
    const root = { $ref: '#/$defs/object', $defs: schema.$defs };
    expect(resolveArg(root, 'inner')).toEqual({ ok: true, shape: { types: null, values: [null] } });
  });

  it.each([
    [{}, 'a', 'the input schema has no property "a"'],
    [null, 'a', 'the input schema has no property "a"'],
    [schema, 'remote.x', 'remote in the input schema has no property "x"'],
    [schema, 'viaRef.inner.deeper', 'viaRef.inner in the input schema has no property "deeper"'],
    [schema, 'hasOwnProperty', 'the input schema has no property "hasOwnProperty"'],
  ])('refuses what the schema lacks (%#)', (root, arg, where) => {
    expect(resolveArg(root, arg)).toEqual({ ok: false, reason: `names no property: ${where}` });
  });
});
