import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, sameJson } from '../../src/sessions/canonical-json.ts';

/** What a canonicalizer gives for a value: its text, or that it threw. */
function outcome(canonical: (value: unknown) => string | undefined, value: unknown) {
  try {
    return { text: canonical(value) };
  } catch {
    return { threw: true };
  }
}

function sameAsPackage(value: unknown): void {
  expect(outcome(canonicalJson, value)).toEqual(outcome(canonicalize, value));
}

/** Strings of any UTF-16 code units, lone surrogates included. */
const anyString = fc.string({ unit: 'binary' });

/** JSON-ish values with awkward keys, strings and numbers, and holes in arrays. */
const awkward = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    anyString,
    fc.double(),
    fc.constantFrom(-0, 0, 1e21, 1e-7, Number.MAX_VALUE, Number.MIN_VALUE, true, false, null),
    fc.constant(undefined),
    fc.array(tie('value')),
    fc.sparseArray(tie('value')),
    fc.dictionary(anyString, tie('value')),
  ),
}));

describe('canonicalJson', () => {
  it('writes every JSON value exactly as canonicalize does', () => {
    fc.assert(fc.property(fc.jsonValue(), sameAsPackage), { numRuns: 500 });
  });

  it('writes or refuses awkward values exactly as canonicalize does', () => {
    fc.assert(fc.property(awkward.value, sameAsPackage), { numRuns: 500 });
  });

  it('sorts keys by UTF-16 code unit, numbers and strings as RFC 8785 writes them', () => {
    const value = { b: [1e21, -0, 0.1], a: '\u2028é\u0001', '\u{1f600}': null, '\uff61': 1 };
    expect(canonicalJson(value)).toBe(
      '{"a":"\u2028é\\u0001","b":[1e+21,0,0.1],"\u{1f600}":null,"\uff61":1}',
    );
    sameAsPackage(value);
  });

  it('refuses lone surrogates in values and keys, and non-finite numbers', () => {
    for (const value of [{ a: '\ud800' }, { '\udc00': 1 }, [Number.NaN], { a: Infinity }]) {
      expect(() => canonicalJson(value)).toThrow();
      sameAsPackage(value);
    }
  });

  it('hands toJSON, boxed primitives and deep nesting to the package', () => {
    let deep: unknown = { leaf: [1, 'two'] };
    for (let i = 0; i < 5_000; i++) deep = i % 2 === 0 ? [deep] : { d: deep };
    const date = new Date(Date.UTC(2026, 0, 1));
    for (const value of [
      { at: date },
      [new Number(1), new String('s'), new Boolean(false)],
      deep,
    ]) {
      sameAsPackage(value);
      expect(canonicalJson(value)).toEqual(expect.any(String));
    }
  });

  it('drops undefined members and writes undefined items as null', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, () => 1] })).toBe('{"b":[null,null]}');
    expect(canonicalJson(undefined)).toBeUndefined();
  });

  it('refuses a cycle, as the package does', () => {
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = { back: cycle };
    expect(() => canonicalJson(cycle)).toThrow();
  });
});

describe('sameJson', () => {
  it('holds for a value and its copy', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(sameJson(value, structuredClone(value))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('only ever holds for values with one canonical text', () => {
    const pair = fc.oneof(
      fc.tuple(awkward.value, awkward.value),
      awkward.value.map((value) => [value, structuredClone(value)] as const),
    );
    fc.assert(
      fc.property(pair, ([a, b]) => {
        if (sameJson(a, b)) expect(outcome(canonicalJson, a)).toEqual(outcome(canonicalJson, b));
      }),
      { numRuns: 500 },
    );
  });

  it('tells apart different keys, values, lengths and kinds of object', () => {
    expect(sameJson({ a: 1 }, { a: 1, b: undefined })).toBe(false);
    expect(sameJson({ a: 1 }, { b: 1 })).toBe(false);
    expect(sameJson({ a: '1' }, { a: 1 })).toBe(false);
    expect(sameJson([1, 2], [1, 2, 3])).toBe(false);
    expect(sameJson([1], { 0: 1 })).toBe(false);
    expect(sameJson(Number.NaN, Number.NaN)).toBe(false);
    const date = new Date(0);
    expect(sameJson({ at: date }, { at: new Date(0) })).toBe(false);
    expect(sameJson({ toJSON: 1 }, { toJSON: 1 })).toBe(false);
    expect(sameJson({ text: 'a', n: [1, { b: null }] }, { n: [1, { b: null }], text: 'a' })).toBe(
      true,
    );
  });
});
