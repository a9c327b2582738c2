import { describe, expect, it } from 'vitest';
import { ConnectionName } from '../../src/schemas/common.ts';
import { PolicyItem, TENANT_BOUNDS, TenantConfig } from '../../src/schemas/tenant.ts';
import { accepted, refusals } from './refusals.ts';

const item = (op: string, value: unknown) => ({
  arg: 'path.to.arg',
  effect: 'deny',
  op,
  operand: { value },
});

const configWith = (items: unknown[]) => ({
  inference: 'default',
  policies: [{ tool: 'search', items }],
});

describe('tenant config (2.6)', () => {
  it('fills the policy defaults of decisions row 23', () => {
    const parsed = accepted(TenantConfig, { inference: 'default', policies: [{ tool: 'search' }] });
    expect(parsed).toEqual({
      inference: 'default',
      extra_tools: [],
      policies: [{ tool: 'search', allow: true, posture: 'permissive', items: [], project: [] }],
    });
  });

  it('requires the inference option', () => {
    expect(refusals(TenantConfig, {})).toEqual([
      { field: 'body.inference', reason: 'is required' },
    ]);
  });

  it('refuses a second policy for one tool (row 23)', () => {
    const config = { inference: 'x', policies: [{ tool: 'a' }, { tool: 'b' }, { tool: 'a' }] };
    expect(refusals(TenantConfig, config)).toEqual([
      { field: 'body.policies.2.tool', reason: 'duplicates the policy for a' },
    ]);
  });

  it('refuses an extra tool named twice', () => {
    const tool = { connection: 'crm', tool: 'lookup' };
    expect(refusals(TenantConfig, { inference: 'x', extra_tools: [tool, tool] })).toEqual([
      { field: 'body.extra_tools.1', reason: 'names crm__lookup twice' },
    ]);
  });

  it('refuses a posture other than permissive or restrictive', () => {
    const config = { inference: 'x', policies: [{ tool: 'a', posture: 'strict' }] };
    expect(refusals(TenantConfig, config)).toEqual([
      { field: 'body.policies.0.posture', reason: 'must be permissive or restrictive' },
    ]);
  });

  it('bounds the items of a policy', () => {
    const items = Array.from({ length: TENANT_BOUNDS.items + 1 }, () => item('is', 1));
    expect(refusals(TenantConfig, configWith(items.slice(1)))).toEqual([]);
    expect(refusals(TenantConfig, configWith(items))).toEqual([
      { field: 'body.policies.0.items', reason: 'must hold at most 256 items' },
    ]);
  });
});

describe('policy items: operand.value typed by op (decisions row 25)', () => {
  it.each([
    ['is', 'text'],
    ['is', 3],
    ['is', false],
    ['is', null],
    ['is_not', 'x'],
    ['in', ['a', 1, true, null]],
    ['not_in', ['a']],
    ['lt', 0],
    ['gt', -2.5],
  ])('takes %s with %j', (op, value) => {
    expect(refusals(PolicyItem, item(op, value))).toEqual([]);
  });

  it.each([
    ['is', ['a'], 'must be a string, number, boolean or null when op is is or is_not'],
    ['is_not', { a: 1 }, 'must be a string, number, boolean or null when op is is or is_not'],
    ['in', 'a', 'must be an array when op is in or not_in'],
    ['not_in', 5, 'must be an array when op is in or not_in'],
    ['lt', '5', 'must be a number when op is lt or gt'],
    ['gt', null, 'must be a number when op is lt or gt'],
  ])('refuses %s with %j, naming operand.value', (op, value, reason) => {
    expect(refusals(TenantConfig, configWith([item('is', 1), item(op, value)]))).toEqual([
      { field: 'body.policies.0.items.1.operand.value', reason },
    ]);
  });

  it('refuses an array holding a non-scalar and an empty in-list', () => {
    expect(refusals(PolicyItem, item('in', [[1]]))).toEqual([
      {
        field: 'body.operand.value.0',
        reason: 'must be a string, number, boolean or null',
      },
    ]);
    expect(refusals(PolicyItem, item('in', []))).toEqual([
      { field: 'body.operand.value', reason: 'must hold at least one value' },
    ]);
  });

  it('refuses an unknown op and a missing operand value', () => {
    expect(refusals(PolicyItem, item('matches', 'x'))).toEqual([
      { field: 'body.op', reason: 'must be one of is, is_not, in, not_in, lt, gt' },
    ]);
    expect(refusals(PolicyItem, { ...item('lt', 1), operand: {} })).toEqual([
      { field: 'body.operand.value', reason: 'is required' },
    ]);
  });

  it('refuses an effect other than allow or deny', () => {
    expect(refusals(PolicyItem, { ...item('is', 1), effect: 'maybe' })).toEqual([
      { field: 'body.effect', reason: 'must be allow or deny' },
    ]);
  });
});

describe('connection names (decisions row 27)', () => {
  it.each(['a', 'crm', 'my-server-2', `a${'b'.repeat(31)}`])('takes %s', (name) => {
    expect(refusals(ConnectionName, name)).toEqual([]);
  });

  it.each(['', 'A', '1a', '-a', 'a_b', 'a.b', `a${'b'.repeat(32)}`])('refuses %j', (name) => {
    expect(
      refusals(TenantConfig, { inference: 'x', extra_tools: [{ connection: name, tool: 't' }] }),
    ).toEqual([
      {
        field: 'body.extra_tools.0.connection',
        reason: 'must be 1 to 32 characters of a-z, 0-9 and -, starting with a letter',
      },
    ]);
  });
});
