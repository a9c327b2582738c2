import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonEqual, lookupArg, projectArgs } from '../../src/policy/json-path.ts';

describe('jsonEqual', () => {
  it.each<[unknown, unknown, boolean]>([
    [1, 1.0, true],
    [0, -0, true],
    [1, '1', false],
    [0, false, false],
    ['', null, false],
    [null, {}, false],
    [[], {}, false],
    [{ 0: 'a' }, ['a'], false],
    [[1, [2, { a: 3 }]], [1, [2, { a: 3 }]], true],
    [[1, 2], [2, 1], false],
    [[1], [1, 1], false],
    [{ a: 1, b: [true] }, { b: [true], a: 1 }, true],
    [{ a: 1 }, { a: 1, b: 1 }, false],
    [{ a: 1, b: 1 }, { a: 1, c: 1 }, false],
    [{ a: null }, {}, false],
  ])('compares %j with %j as %s', (left, right, equal) => {
    expect(jsonEqual(left, right)).toBe(equal);
    expect(jsonEqual(right, left)).toBe(equal);
  });

  it('agrees with comparing RFC 8785 texts, on any JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.jsonValue({ maxDepth: 3 }), (left, right) => {
        expect(jsonEqual(left, structuredClone(left))).toBe(true);
        expect(jsonEqual(left, right)).toBe(
          JSON.stringify(sorted(left)) === JSON.stringify(sorted(right)),
        );
      }),
      { numRuns: 300 },
    );
  });
});

/** `value` with object keys sorted at every depth, so JSON texts compare as values. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
  );
}

describe('lookupArg and projectArgs', () => {
  it('walks own properties of objects only, and reads absent as undefined', () => {
    const args = JSON.parse('{"a":{"b":{"c":0}},"__proto__":{"x":1},"list":[{"d":1}]}') as unknown;
    expect(lookupArg(args, 'a.b.c')).toBe(0);
    expect(lookupArg(args, 'a.b')).toEqual({ c: 0 });
    expect(lookupArg(args, '__proto__.x')).toBe(1);
    expect(lookupArg(args, 'a.toString')).toBeUndefined();
    expect(lookupArg(args, 'list.0.d')).toBeUndefined();
    expect(lookupArg('text', 'length')).toBeUndefined();
    expect(lookupArg(null, 'a')).toBeUndefined();
  });

  it('projects present args as own keys, a __proto__ arg included', () => {
    const args = JSON.parse('{"__proto__":{"polluted":true},"n":null}') as unknown;
    const evidence = projectArgs(args, ['__proto__', 'n', 'missing']);
    expect(Object.keys(evidence)).toEqual(['__proto__', 'n']);
    expect(Object.getPrototypeOf(evidence)).toBe(Object.prototype);
    expect(JSON.stringify(evidence)).toBe('{"__proto__":{"polluted":true},"n":null}');
  });
});
