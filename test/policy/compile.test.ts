import { describe, expect, it } from 'vitest';
import { compilePolicies } from '../../src/policy/compile.ts';
import type { PolicyInput, PolicyItemInput } from '../../src/policy/types.ts';
import { TenantConfig } from '../../src/schemas/tenant.ts';
import { SURFACE, refusal } from './surface.fixture.ts';

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

/** The one refusal of a single search policy holding `items` and `project`. */
function refuseSearch(items: PolicyItemInput[], project: string[] = []) {
  const error = refusal(() => compilePolicies([{ tool: 'search', items, project }], SURFACE));
  expect(error.code).toBe('invalid_policy');
  expect(error.status).toBe(400);
  return { field: error.field, reason: error.reason };
}

describe('compilePolicies defaults (decisions rows 23, 24)', () => {
  it('gives every surface tool a plan: allow, permissive, nothing bound', () => {
    const plan = compilePolicies([], SURFACE);
    expect(Object.keys(plan.tools)).toEqual(['files__read', 'search', 'send']);
    for (const tool of Object.values(plan.tools)) {
      expect(tool).toEqual({
        allow: true,
        posture: 'permissive',
        denyItems: [],
        allowItems: [],
        conditionedArgs: [],
        project: [],
      });
    }
  });

  it('compiles a policy that only names its tool to the same plan and digest as no policy', () => {
    const none = compilePolicies([], SURFACE);
    const bare = compilePolicies([{ tool: 'send' }], SURFACE);
    const spelled = compilePolicies(
      [{ tool: 'send', allow: true, posture: 'permissive', items: [], project: [] }],
      SURFACE,
    );
    expect(bare).toEqual(none);
    expect(spelled.digest).toBe(none.digest);
  });
});

describe('compilePolicies plan', () => {
  const policies: PolicyInput[] = [
    {
      tool: 'search',
      posture: 'restrictive',
      items: [
        item('query', 'in', ['cats', 'dogs']),
        item('limit', 'gt', 100, 'deny'),
        item('filter.deep.level', 'lt', 3),
        item('query', 'is', 'birds'),
      ],
      project: ['query', 'filter.owner', 'query'],
    },
  ];

  it('splits items by effect, keeping their written indexes', () => {
    const search = compilePolicies(policies, SURFACE).tools.search;
    expect(search?.posture).toBe('restrictive');
    expect(search?.denyItems).toEqual([{ index: 1, arg: 'limit', op: 'gt', value: 100 }]);
    expect(search?.allowItems.map((compiled) => compiled.index)).toEqual([0, 2, 3]);
    expect(search?.conditionedArgs).toEqual(['query', 'filter.deep.level']);
    expect(search?.project).toEqual(['query', 'filter.owner']);
  });

  it('is frozen all the way down', () => {
    const plan = compilePolicies(policies, SURFACE);
    const allowed = plan.tools.search?.allowItems[0];
    expect(Object.isFrozen(plan)).toBe(true);
    expect(Object.isFrozen(plan.tools)).toBe(true);
    expect(Object.isFrozen(allowed)).toBe(true);
    expect(Object.isFrozen(allowed?.value)).toBe(true);
    expect(() => {
      (plan.tools.search?.allowItems as unknown[]).push('more');
    }).toThrow(TypeError);
  });

  it('digests the plan: 64 hex, blind to surface order, moved by any operand', () => {
    const plan = compilePolicies(policies, SURFACE);
    expect(plan.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(compilePolicies(policies, [...SURFACE].reverse()).digest).toBe(plan.digest);
    const [search] = policies;
    const items = (search?.items ?? []).map((entry, index) =>
      index === 1 ? item('limit', 'gt', 101, 'deny') : entry,
    );
    const changed = compilePolicies([{ ...search, tool: 'search', items }], SURFACE);
    const same = compilePolicies([{ ...search, tool: 'search', items: [...items] }], SURFACE);
    expect(changed.digest).not.toBe(plan.digest);
    expect(same.digest).toBe(changed.digest);
  });

  it('accepts operands that fit: untyped, integer bound, anyOf, enum, nullable, $ref', () => {
    const plan = compilePolicies(
      [
        {
          tool: 'search',
          items: [
            item('anything', 'lt', 5),
            item('anything', 'is', 'text'),
            item('limit', 'lt', 2.5),
            item('choice', 'in', ['a', 1, true]),
            item('color', 'not_in', ['red']),
            item('mode', 'is', 'fast'),
            item('note', 'is', null),
            item('filter.deep.level', 'is', 2),
          ],
        },
      ],
      SURFACE,
    );
    expect(plan.tools.search?.allowItems).toHaveLength(8);
  });

  it('compiles the tenant config as src/schemas/tenant.ts parses it', () => {
    const config = TenantConfig.parse({
      inference: 'default',
      policies: [
        {
          tool: 'files__read',
          items: [{ arg: 'path', effect: 'deny', op: 'is', operand: { value: '/etc' } }],
        },
      ],
    });
    const plan = compilePolicies(config.policies, SURFACE, { field: 'body.policies' });
    expect(plan.tools.files__read?.denyItems).toEqual([
      { index: 0, arg: 'path', op: 'is', value: '/etc' },
    ]);
  });
});

describe('compilePolicies refusals', () => {
  it('refuses a policy for a tool the model does not see (row 23)', () => {
    const error = refusal(() => compilePolicies([{ tool: 'read' }], SURFACE));
    expect(error.field).toBe('policies.0.tool');
    expect(error.reason).toBe('names no tool the model sees: "read"');
  });

  it('refuses a second policy for one tool (row 23)', () => {
    const error = refusal(() => compilePolicies([{ tool: 'send' }, { tool: 'send' }], SURFACE));
    expect(error.field).toBe('policies.1.tool');
    expect(error.reason).toBe('duplicates the policy for send at policies.0');
  });

  it('refuses two surface tools under one name (row 27)', () => {
    const error = refusal(() => compilePolicies([], [...SURFACE, ...SURFACE.slice(0, 1)]));
    expect(error.code).toBe('tool_name_clash');
    expect(error.message).toBe('search is the model-visible name of two tools');
  });

  it.each([
    ['nope', 'names no property: the input schema has no property "nope"'],
    ['filter.nope', 'names no property: filter in the input schema has no property "nope"'],
    [
      'filter.deep.nope',
      'names no property: filter.deep in the input schema has no property "nope"',
    ],
    ['query.length', 'names no property: query in the input schema has no property "length"'],
    ['tags.0', 'names no property: tags in the input schema has no property "0"'],
    ['choice.x', 'names no property: choice in the input schema has no property "x"'],
    ['constructor', 'names no property: the input schema has no property "constructor"'],
    ['', 'names no property: the input schema has no property ""'],
  ])('refuses the arg %j, which the input schema lacks (row 26)', (arg, reason) => {
    expect(refuseSearch([item(arg, 'is', 'x')])).toEqual({
      field: 'policies.0.items.0.arg',
      reason,
    });
  });

  it.each<[string, PolicyItemInput['op'], unknown, string, string]>([
    [
      'query',
      'is',
      { a: 1 },
      'operand.value',
      'must be a string, number, boolean or null when op is is',
    ],
    [
      'query',
      'is_not',
      ['x'],
      'operand.value',
      'must be a string, number, boolean or null when op is is_not',
    ],
    ['query', 'is', 7, 'operand.value', 'must fit query, which is declared string'],
    ['query', 'is', null, 'operand.value', 'must fit query, which is declared string'],
    ['limit', 'is', 1.5, 'operand.value', 'must fit limit, which is declared integer'],
    ['safe', 'is_not', 'true', 'operand.value', 'must fit safe, which is declared boolean'],
    [
      'color',
      'is',
      'purple',
      'operand.value',
      'must be one of the values color allows: ["red","green","blue"]',
    ],
    ['mode', 'is_not', 'slow', 'operand.value', 'must be one of the values mode allows: ["fast"]'],
    ['query', 'in', 'cats', 'operand.value', 'must be an array when op is in'],
    ['query', 'not_in', [], 'operand.value', 'must hold at least one value'],
    [
      'query',
      'in',
      ['a', { b: 1 }],
      'operand.value.1',
      'must be a string, number, boolean or null when op is in',
    ],
    ['query', 'not_in', ['a', 2], 'operand.value.1', 'must fit query, which is declared string'],
    [
      'color',
      'in',
      ['red', 'pink'],
      'operand.value.1',
      'must be one of the values color allows: ["red","green","blue"]',
    ],
    ['score', 'lt', '5', 'operand.value', 'must be a number when op is lt'],
    ['score', 'gt', [5], 'operand.value', 'must be a number when op is gt'],
    ['query', 'gt', 5, 'op', 'cannot be gt on query, which is declared string'],
    ['safe', 'lt', 1, 'op', 'cannot be lt on safe, which is declared boolean'],
    ['note', 'lt', 1, 'op', 'cannot be lt on note, which is declared string or null'],
  ])('refuses %s %s %j (row 25)', (arg, op, value, suffix, reason) => {
    expect(refuseSearch([item(arg, op, value)])).toEqual({
      field: `policies.0.items.0.${suffix}`,
      reason,
    });
  });

  it('refuses an unknown op from an unparsed policy', () => {
    const raw = { arg: 'query', effect: 'allow', op: 'like', operand: { value: 'x' } };
    expect(refuseSearch([raw as unknown as PolicyItemInput])).toEqual({
      field: 'policies.0.items.0.op',
      reason: 'must be one of is, is_not, in, not_in, lt, gt',
    });
  });

  it('refuses a projected arg the input schema lacks (row 26)', () => {
    expect(refuseSearch([], ['query', 'filter.missing'])).toEqual({
      field: 'policies.0.project.1',
      reason: 'names no property: filter in the input schema has no property "missing"',
    });
  });

  it('names fields under the prefix the caller gives and lists every fault', () => {
    const policies: PolicyInput[] = [
      { tool: 'send', items: [item('amount', 'lt', 'ten')] },
      { tool: 'gone' },
      { tool: 'search', items: [item('query', 'is', 'ok'), item('nope', 'is', 1)], project: ['x'] },
    ];
    const error = refusal(() => compilePolicies(policies, SURFACE, { field: 'body.policies' }));
    expect(error.field).toBe('body.policies.0.items.0.operand.value');
    expect(error.message).toBe(
      'body.policies.0.items.0.operand.value must be a number when op is lt',
    );
    expect(error.errors?.map((fault) => fault.field)).toEqual([
      'body.policies.0.items.0.operand.value',
      'body.policies.1.tool',
      'body.policies.2.items.1.arg',
      'body.policies.2.project.0',
    ]);
  });
});
