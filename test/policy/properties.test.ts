/**
 * Properties of the policy evaluator over generated policies and calls, checked against
 * a reference model written here from 2.6 and decisions rows 24 to 26 (its own lookup,
 * and equality by RFC 8785 text rather than by walking values).
 */
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidRequest } from '../../src/errors.ts';
import { compilePolicies } from '../../src/policy/compile.ts';
import { evaluateCall } from '../../src/policy/evaluate.ts';
import type { PolicyInput, PolicyItemInput, PolicyOp, Scalar } from '../../src/policy/types.ts';
import { SURFACE } from './surface.fixture.ts';

const RUNS = { numRuns: 300 };

/** Args of the search tool, each with values that fit it, and whether lt/gt apply. */
const FIELDS: readonly { arg: string; pool: readonly Scalar[]; numeric: boolean }[] = [
  { arg: 'query', pool: ['a', 'b', 'c'], numeric: false },
  { arg: 'limit', pool: [0, 1, 2, 3], numeric: true },
  { arg: 'score', pool: [-1.5, 0, 2, 10], numeric: true },
  { arg: 'safe', pool: [true, false], numeric: false },
  { arg: 'color', pool: ['red', 'green', 'blue'], numeric: false },
  { arg: 'note', pool: ['a', null], numeric: false },
  { arg: 'anything', pool: ['a', 1, true, null], numeric: true },
  { arg: 'filter.owner', pool: ['a', 'b'], numeric: false },
  { arg: 'filter.size', pool: [0, 5], numeric: true },
  { arg: 'filter.deep.level', pool: [0, 1, 2], numeric: true },
];
const poolOf = (arg: string) => FIELDS.find((field) => field.arg === arg)?.pool ?? [];

const itemArb: fc.Arbitrary<PolicyItemInput> = fc.constantFrom(...FIELDS).chain((field) => {
  const ops: PolicyOp[] = [
    'is',
    'is_not',
    'in',
    'not_in',
    ...(field.numeric ? (['lt', 'gt'] as const) : []),
  ];
  return fc
    .record({
      effect: fc.constantFrom('allow' as const, 'deny' as const),
      op: fc.constantFrom(...ops),
    })
    .chain(({ effect, op }) => {
      const value: fc.Arbitrary<unknown> =
        op === 'is' || op === 'is_not'
          ? fc.constantFrom(...field.pool)
          : op === 'in' || op === 'not_in'
            ? fc.subarray([...field.pool], { minLength: 1 })
            : fc.constantFrom(-1, 0, 1, 2, 5);
      return value.map((operand) => ({ arg: field.arg, effect, op, operand: { value: operand } }));
    });
});

const policyArb = (
  allow: fc.Arbitrary<boolean>,
  posture = fc.constantFrom('permissive' as const, 'restrictive' as const),
) =>
  fc.record({
    tool: fc.constant('search'),
    allow,
    posture,
    items: fc.array(itemArb, { maxLength: 6 }),
    project: fc.subarray(FIELDS.map((field) => field.arg)),
  });

/** Mostly values a policy talks about, then values a coercing comparison would confuse, then any JSON. */
const valueArb = (arg: string) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...poolOf(arg)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<unknown>('1', '', '0', null, true, false, 1, [1], { 0: 1 }),
    },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
  );
const optional = { requiredKeys: [] as [] };
const argsArb: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.record(
      {
        query: valueArb('query'),
        limit: valueArb('limit'),
        score: valueArb('score'),
        safe: valueArb('safe'),
        color: valueArb('color'),
        note: valueArb('note'),
        anything: valueArb('anything'),
        filter: fc.oneof(
          fc.record(
            {
              owner: valueArb('filter.owner'),
              size: valueArb('filter.size'),
              deep: fc.oneof(
                fc.record({ level: valueArb('filter.deep.level') }, optional),
                fc.jsonValue(),
              ),
            },
            optional,
          ),
          fc.jsonValue({ maxDepth: 2 }),
        ),
      },
      optional,
    ),
  },
  { weight: 1, arbitrary: fc.jsonValue() },
);

// The reference model.
function lookup(args: unknown, arg: string): { found: boolean; value: unknown } {
  let at: { found: boolean; value: unknown } = { found: true, value: args };
  for (const key of arg.split('.')) {
    const { value } = at;
    const walkable =
      at.found && typeof value === 'object' && value !== null && !Array.isArray(value);
    at =
      walkable && Object.prototype.hasOwnProperty.call(value, key)
        ? { found: true, value: (value as Record<string, unknown>)[key] }
        : { found: false, value: undefined };
  }
  return at;
}
function holds(item: PolicyItemInput, args: unknown): boolean {
  const { found, value } = lookup(args, item.arg);
  const same = (operand: unknown) => canonicalize(value) === canonicalize(operand);
  const operand = item.operand.value;
  if (!found) return false;
  if (item.op === 'is') return same(operand);
  if (item.op === 'is_not') return !same(operand);
  if (item.op === 'in') return (operand as unknown[]).some(same);
  if (item.op === 'not_in') return !(operand as unknown[]).some(same);
  if (typeof value !== 'number') return false;
  return item.op === 'lt' ? value < (operand as number) : value > (operand as number);
}
function model(policy: PolicyInput, args: unknown) {
  const items = (policy.items ?? []).map((entry, index) => ({
    entry,
    index,
    holds: holds(entry, args),
  }));
  if (policy.allow === false) return { allowed: false, reason: 'disabled', item: null };
  const deny = items.find(({ entry, holds: hit }) => entry.effect === 'deny' && hit);
  if (deny) return { allowed: false, reason: 'deny', item: deny.index };
  const allows = items.filter(({ entry }) => entry.effect === 'allow');
  const unmet = allows.some(
    ({ entry }) => !allows.some((other) => other.entry.arg === entry.arg && other.holds),
  );
  if (policy.posture === 'restrictive' && unmet)
    return { allowed: false, reason: 'unsatisfied', item: null };
  return {
    allowed: true,
    matched: allows.filter((entry) => entry.holds).map(({ index }) => index),
  };
}

describe('evaluateCall properties', () => {
  it('agrees with the reference model on every generated policy and call', () => {
    fc.assert(
      fc.property(policyArb(fc.boolean()), argsArb, (policy, args) => {
        const decision = evaluateCall(compilePolicies([policy], SURFACE), 'search', args);
        expect(decision).toMatchObject(model(policy, args));
      }),
      RUNS,
    );
  });

  it('lets deny beat allow: a matching deny item always denies', () => {
    const query = fc.constantFrom('a', 'b', 'c');
    fc.assert(
      fc.property(
        policyArb(fc.constant(true)),
        argsArb,
        query,
        fc.boolean(),
        (policy, args, value, denyFirst) => {
          const call = { ...(typeof args === 'object' && args !== null ? args : {}), query: value };
          const pair = [
            { arg: 'query', effect: 'allow' as const, op: 'is' as const, operand: { value } },
            {
              arg: 'query',
              effect: 'deny' as const,
              op: 'in' as const,
              operand: { value: [value] },
            },
          ];
          const items = [...policy.items, ...(denyFirst ? pair.reverse() : pair)];
          const decision = evaluateCall(
            compilePolicies([{ ...policy, items }], SURFACE),
            'search',
            call,
          );
          expect(decision).toMatchObject({ allowed: false, reason: 'deny' });
        },
      ),
      RUNS,
    );
  });

  it('never lets a restrictive policy allow a call whose conditioned arg meets no allow item', () => {
    let premises = 0;
    fc.assert(
      fc.property(
        policyArb(fc.constant(true), fc.constant('restrictive' as const)),
        argsArb,
        (policy, args) => {
          const plan = compilePolicies([policy], SURFACE);
          const allowItems = policy.items.filter((entry) => entry.effect === 'allow');
          const unmet = allowItems.some(
            (entry) => !allowItems.some((other) => other.arg === entry.arg && holds(other, args)),
          );
          if (unmet) {
            premises += 1;
            expect(evaluateCall(plan, 'search', args).allowed).toBe(false);
          }
        },
      ),
      RUNS,
    );
    expect(premises).toBeGreaterThan(RUNS.numRuns / 10);
  });

  it('never allows a disabled tool', () => {
    fc.assert(
      fc.property(policyArb(fc.constant(false)), argsArb, (policy, args) => {
        const decision = evaluateCall(compilePolicies([policy], SURFACE), 'search', args);
        expect(decision).toMatchObject({ allowed: false, reason: 'disabled', item: null });
      }),
      RUNS,
    );
  });

  it('never throws, whatever the tool name and the JSON arguments', () => {
    const name = fc.oneof(
      fc.constantFrom(
        'search',
        'send',
        'files__read',
        '__proto__',
        'constructor',
        'hasOwnProperty',
      ),
      fc.string(),
    );
    const args = fc.oneof(fc.jsonValue(), fc.constant(undefined), argsArb);
    fc.assert(
      fc.property(policyArb(fc.boolean()), name, args, (policy, tool, call) => {
        const decision = evaluateCall(compilePolicies([policy], SURFACE), tool, call);
        expect(typeof decision.allowed).toBe('boolean');
        expect(JSON.parse(JSON.stringify(decision.evidence))).toBeTypeOf('object');
      }),
      RUNS,
    );
  });
});

describe('compilePolicies properties', () => {
  it('either compiles or refuses with a field, for any JSON operand and any arg', () => {
    const raw = fc.record({
      arg: fc.oneof(fc.constantFrom(...FIELDS.map((field) => field.arg)), fc.string()),
      effect: fc.constantFrom('allow' as const, 'deny' as const),
      op: fc.constantFrom<PolicyOp>('is', 'is_not', 'in', 'not_in', 'lt', 'gt'),
      operand: fc.record({ value: fc.jsonValue({ maxDepth: 2 }) }),
    });
    fc.assert(
      fc.property(fc.array(raw, { maxLength: 4 }), (items) => {
        try {
          compilePolicies([{ tool: 'search', items }], SURFACE);
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidRequest);
          expect((error as InvalidRequest).field).toMatch(
            /^policies\.0\.items\.\d+\.(arg|op|operand\.value(\.\d+)?)$/,
          );
        }
      }),
      RUNS,
    );
  });
});
