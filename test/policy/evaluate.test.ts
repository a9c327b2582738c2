import { describe, expect, it } from 'vitest';
import { compilePolicies } from '../../src/policy/compile.ts';
import { evaluateCall } from '../../src/policy/evaluate.ts';
import type { PolicyInput, PolicyItemInput, SurfaceTool } from '../../src/policy/types.ts';
import { SURFACE } from './surface.fixture.ts';

const item = (
  arg: string,
  op: PolicyItemInput['op'],
  value: unknown,
  effect: 'allow' | 'deny' = 'allow',
) => ({
  arg,
  op,
  effect,
  operand: { value },
});

/** Whether a restrictive search policy holding the one allow item lets `args` through. */
function allows(condition: PolicyItemInput, args: unknown): boolean {
  const plan = compilePolicies(
    [{ tool: 'search', posture: 'restrictive', items: [condition] }],
    SURFACE,
  );
  return evaluateCall(plan, 'search', args).allowed;
}

describe('evaluateCall operators (2.6)', () => {
  it('is: deep equality without coercion', () => {
    expect(allows(item('anything', 'is', 1), { anything: 1 })).toBe(true);
    expect(allows(item('anything', 'is', 1), { anything: 1.0 })).toBe(true);
    expect(allows(item('anything', 'is', 1), { anything: '1' })).toBe(false);
    expect(allows(item('anything', 'is', 0), { anything: false })).toBe(false);
    expect(allows(item('anything', 'is', null), { anything: null })).toBe(true);
    expect(allows(item('anything', 'is', null), { anything: 0 })).toBe(false);
    expect(allows(item('anything', 'is', 'a'), { anything: ['a'] })).toBe(false);
  });

  it('is_not: holds for any present value not equal, including other types', () => {
    expect(allows(item('query', 'is_not', 'secret'), { query: 'public' })).toBe(true);
    expect(allows(item('query', 'is_not', 'secret'), { query: 'secret' })).toBe(false);
    expect(allows(item('query', 'is_not', 'secret'), { query: { nested: 'secret' } })).toBe(true);
  });

  it('in and not_in: membership by deep equality', () => {
    expect(allows(item('color', 'in', ['red', 'blue']), { color: 'blue' })).toBe(true);
    expect(allows(item('color', 'in', ['red', 'blue']), { color: 'green' })).toBe(false);
    expect(allows(item('anything', 'in', [1, 'x']), { anything: '1' })).toBe(false);
    expect(allows(item('color', 'not_in', ['red']), { color: 'green' })).toBe(true);
    expect(allows(item('color', 'not_in', ['red']), { color: 'red' })).toBe(false);
  });

  it('lt and gt: strict, numbers only', () => {
    expect(allows(item('score', 'lt', 10), { score: 9.5 })).toBe(true);
    expect(allows(item('score', 'lt', 10), { score: 10 })).toBe(false);
    expect(allows(item('score', 'lt', 10), { score: '5' })).toBe(false);
    expect(allows(item('score', 'gt', 10), { score: 11 })).toBe(true);
    expect(allows(item('score', 'gt', 10), { score: 10 })).toBe(false);
    expect(allows(item('anything', 'gt', 0), { anything: true })).toBe(false);
  });

  it('reads dotted args through nested objects, and only own properties', () => {
    const level = item('filter.deep.level', 'lt', 3);
    expect(allows(level, { filter: { deep: { level: 2 } } })).toBe(true);
    expect(allows(level, { filter: { deep: { level: 3 } } })).toBe(false);
    expect(allows(level, { filter: { deep: [2] } })).toBe(false);
    expect(allows(level, { filter: 'deep.level' })).toBe(false);
    expect(allows(level, { 'filter.deep.level': 2 })).toBe(false);
    const surface: SurfaceTool[] = [
      { name: 'odd', inputSchema: { properties: { constructor: {} } }, source: 'vendor' },
    ];
    const plan = compilePolicies(
      [{ tool: 'odd', items: [item('constructor', 'is_not', 'x', 'deny')] }],
      surface,
    );
    // `{}` inherits a `constructor`; the call did not send one, so the deny item matches nothing.
    expect(evaluateCall(plan, 'odd', {}).allowed).toBe(true);
    expect(evaluateCall(plan, 'odd', { constructor: 'y' }).allowed).toBe(false);
  });
});

describe('evaluateCall decisions', () => {
  const policies: PolicyInput[] = [
    {
      tool: 'search',
      items: [
        item('query', 'in', ['cats', 'dogs']),
        item('limit', 'gt', 50, 'deny'),
        item('query', 'is', 'cats', 'deny'),
        item('limit', 'lt', 10),
      ],
      project: ['query', 'filter.owner', 'note'],
    },
    { tool: 'send', allow: false, project: ['to'] },
  ];
  const permissive = compilePolicies(policies, SURFACE);
  const restrictive = compilePolicies(
    policies.map((policy) => ({ ...policy, posture: 'restrictive' as const })),
    SURFACE,
  );

  it('answers unknown_tool for a name not on the surface, prototype names included', () => {
    for (const name of ['read', 'files_read', 'constructor', '__proto__', 'toString']) {
      expect(evaluateCall(permissive, name, {})).toEqual({
        allowed: false,
        reason: 'unknown_tool',
        item: null,
        arg: null,
        evidence: {},
      });
    }
  });

  it('allows a tool that has no policy, whatever its args (row 24)', () => {
    expect(evaluateCall(permissive, 'files__read', { path: '/etc/shadow' })).toEqual({
      allowed: true,
      matched: [],
      evidence: {},
    });
    expect(evaluateCall(permissive, 'files__read', 'not an object').allowed).toBe(true);
  });

  it('answers disabled for allow: false, with the evidence', () => {
    expect(evaluateCall(permissive, 'send', { to: 'bob' })).toEqual({
      allowed: false,
      reason: 'disabled',
      item: null,
      arg: null,
      evidence: { to: 'bob' },
    });
  });

  it('lets the first matching deny item beat a matching allow item', () => {
    const decision = evaluateCall(permissive, 'search', { query: 'cats', limit: 60 });
    expect(decision).toMatchObject({ allowed: false, reason: 'deny', item: 1, arg: 'limit' });
    expect(evaluateCall(restrictive, 'search', { query: 'cats', limit: 5 })).toMatchObject({
      allowed: false,
      reason: 'deny',
      item: 2,
      arg: 'query',
    });
  });

  it('under permissive binds only deny items, and reports the allow items that hold', () => {
    expect(evaluateCall(permissive, 'search', { query: 'owls' })).toEqual({
      allowed: true,
      matched: [],
      evidence: { query: 'owls' },
    });
    expect(evaluateCall(permissive, 'search', { query: 'dogs', limit: 3 })).toMatchObject({
      allowed: true,
      matched: [0, 3],
    });
  });

  it('under restrictive needs every conditioned arg met; an absent arg fails (row 26)', () => {
    expect(evaluateCall(restrictive, 'search', { query: 'dogs', limit: 3 })).toMatchObject({
      allowed: true,
      matched: [0, 3],
    });
    expect(evaluateCall(restrictive, 'search', { query: 'owls', limit: 3 })).toMatchObject({
      allowed: false,
      reason: 'unsatisfied',
      item: null,
      arg: 'query',
    });
    expect(evaluateCall(restrictive, 'search', { query: 'dogs' })).toMatchObject({
      reason: 'unsatisfied',
      arg: 'limit',
    });
    expect(evaluateCall(restrictive, 'search', undefined)).toMatchObject({ reason: 'unsatisfied' });
  });

  it('under restrictive with no allow items conditions nothing', () => {
    const plan = compilePolicies([{ tool: 'send', posture: 'restrictive' }], SURFACE);
    expect(evaluateCall(plan, 'send', 42)).toEqual({ allowed: true, matched: [], evidence: {} });
  });

  it('projects evidence by dotted arg, leaving absent args out and keeping null', () => {
    const decision = evaluateCall(permissive, 'search', {
      query: 'owls',
      filter: { owner: { id: 7 } },
      note: null,
    });
    expect(decision.evidence).toEqual({ query: 'owls', 'filter.owner': { id: 7 }, note: null });
    expect(evaluateCall(permissive, 'search', [1, 2]).evidence).toEqual({});
  });
});
