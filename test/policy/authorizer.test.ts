import { describe, expect, it } from 'vitest';
import { Authorizer, type AuthorizedTool } from '../../src/policy/authorizer.ts';
import { compilePolicies } from '../../src/policy/compile.ts';

const tools: AuthorizedTool[] = [
  {
    name: 'refund',
    inputSchema: {
      type: 'object',
      properties: { amount: { type: 'number' }, to: { type: 'string' } },
      required: ['amount'],
    },
    source: 'vendor',
    timeoutMs: 60_000,
    resultLimit: 1024,
  },
  {
    name: 'wipe',
    inputSchema: { type: 'object' },
    source: 'vendor',
    timeoutMs: 60_000,
    resultLimit: 1024,
  },
  {
    name: 'search__echo',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } } },
    source: { connection: 'search', tool: 'echo' },
    timeoutMs: 5000,
    resultLimit: 2048,
  },
];

const plan = compilePolicies(
  [
    {
      tool: 'refund',
      posture: 'restrictive',
      items: [
        { arg: 'to', effect: 'deny', op: 'is', operand: { value: 'mallory' } },
        { arg: 'amount', effect: 'allow', op: 'lt', operand: { value: 100 } },
      ],
      project: ['amount', 'to'],
    },
    { tool: 'wipe', allow: false },
  ],
  tools,
);

describe('the authorizer', () => {
  const authorizer = new Authorizer(plan, tools, 'shipper');

  it('checks the input schema before any policy', () => {
    expect(authorizer.decide('refund', { amount: 'x', to: 'mallory' })).toMatchObject({
      allowed: false,
      reason: 'invalid_args',
      item: null,
      evidence: { amount: 'x', to: 'mallory' },
      detail: 'args/amount must be number',
    });
    expect(authorizer.decide('refund', {})).toMatchObject({ reason: 'invalid_args' });
  });

  it('applies deny items, then the restrictive allow items, projecting evidence', () => {
    expect(authorizer.decide('refund', { amount: 5, to: 'mallory' })).toMatchObject({
      allowed: false,
      reason: 'deny',
      item: 0,
      evidence: { amount: 5, to: 'mallory' },
    });
    expect(authorizer.decide('refund', { amount: 500 })).toMatchObject({
      allowed: false,
      reason: 'unsatisfied',
      item: null,
      evidence: { amount: 500 },
    });
    expect(authorizer.decide('refund', { amount: 50 })).toMatchObject({
      allowed: true,
      target: 'executor:shipper',
      matched: [1],
      evidence: { amount: 50 },
    });
  });

  it('names disabled and unknown tools, and sends extra tools to their connection', () => {
    expect(authorizer.decide('wipe', {})).toMatchObject({ allowed: false, reason: 'disabled' });
    expect(authorizer.decide('nope', {})).toMatchObject({ allowed: false, reason: 'unknown_tool' });
    expect(authorizer.decide('search__echo', { message: 'hi' })).toMatchObject({
      allowed: true,
      target: 'connection:search',
      tool: { timeoutMs: 5000, resultLimit: 2048 },
    });
  });

  it('refuses vendor tools without an executor, not extra tools', () => {
    const alone = new Authorizer(plan, tools, null);
    expect(alone.decide('refund', { amount: 50 })).toMatchObject({ reason: 'no_executor' });
    expect(alone.decide('search__echo', {})).toMatchObject({ allowed: true });
  });

  it('fails closed on an input schema that does not compile', () => {
    const broken: AuthorizedTool[] = [
      {
        name: 'odd',
        inputSchema: { type: 'object', properties: { a: { type: 7 } } },
        source: 'vendor',
        timeoutMs: 60_000,
        resultLimit: 1024,
      },
    ];
    const odd = new Authorizer(compilePolicies([], broken), broken, 'shipper');
    expect(odd.decide('odd', {})).toMatchObject({ allowed: false, reason: 'invalid_args' });
  });
});

describe('input schemas of MCP servers', () => {
  it('checks arguments against a schema that declares draft-07', () => {
    const echo: AuthorizedTool[] = [
      {
        name: 'everything__echo',
        inputSchema: {
          $schema: 'http://json-schema.org/draft-07/schema#',
          type: 'object',
          properties: { message: { type: 'string' } },
          required: ['message'],
        },
        source: { connection: 'everything', tool: 'echo' },
        timeoutMs: 5000,
        resultLimit: 1024,
      },
    ];
    const authorizer = new Authorizer(compilePolicies([], echo), echo, null);
    expect(authorizer.decide('everything__echo', { message: 'hi' })).toMatchObject({
      allowed: true,
    });
    expect(authorizer.decide('everything__echo', {})).toMatchObject({ reason: 'invalid_args' });
  });
});
