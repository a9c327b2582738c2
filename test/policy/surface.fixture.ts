/**
 * A surface of tools for the policy tests: one vendor tool whose input schema declares
 * every kind of property a policy may meet, a small vendor tool, and an extra tool
 * named `<connection>__<tool>` (decisions row 27).
 */
import { expect } from 'vitest';
import { InvalidRequest } from '../../src/errors.ts';
import type { SurfaceTool } from '../../src/policy/types.ts';

export const SEARCH_SCHEMA = {
  type: 'object',
  properties: {
    query: { type: 'string' },
    limit: { type: 'integer' },
    score: { type: 'number' },
    safe: { type: 'boolean' },
    color: { type: 'string', enum: ['red', 'green', 'blue'] },
    mode: { const: 'fast' },
    note: { type: ['string', 'null'] },
    anything: {},
    choice: { anyOf: [{ type: 'string' }, { type: 'number' }] },
    tags: { type: 'array', items: { type: 'string' } },
    filter: {
      type: 'object',
      properties: {
        owner: { type: 'string' },
        size: { type: 'number' },
        deep: { $ref: '#/$defs/deep' },
      },
    },
  },
  $defs: { deep: { type: 'object', properties: { level: { type: 'integer' } } } },
} as const;

export const SURFACE: readonly SurfaceTool[] = [
  { name: 'search', inputSchema: SEARCH_SCHEMA, source: 'vendor' },
  {
    name: 'send',
    inputSchema: {
      type: 'object',
      properties: { to: { type: 'string' }, amount: { type: 'number' } },
      required: ['to'],
    },
    source: 'vendor',
  },
  {
    name: 'files__read',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
    source: { connection: 'files', tool: 'read' },
  },
];

/** Runs `compile` and returns the InvalidRequest it must throw. */
export function refusal(compile: () => unknown): InvalidRequest {
  try {
    compile();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidRequest);
    return error as InvalidRequest;
  }
  throw new Error('expected the policies to be refused');
}
