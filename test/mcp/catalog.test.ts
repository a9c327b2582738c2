import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { catalogDigest, catalogTool, sortTools } from '../../src/mcp/catalog.ts';
import type { CatalogTool } from '../../src/schemas/connections.ts';

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

describe('the catalog digest', () => {
  it('hashes the RFC 8785 form: keys sorted, no whitespace, whatever order the server used', () => {
    const tool = {
      name: 'lookup',
      inputSchema: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
      description: 'Looks up a word',
    } as const;
    const canonical =
      '[{"description":"Looks up a word","inputSchema":{"properties":{"q":{"type":"string"}},' +
      '"required":["q"],"type":"object"},"name":"lookup"}]';
    expect(catalogDigest([tool])).toBe(sha256(canonical));
  });

  it('refuses tools with no canonical form', () => {
    const broken: CatalogTool = {
      name: 'x',
      description: '\uD800',
      inputSchema: { type: 'object' },
    };
    expect(() => catalogDigest([broken])).toThrow(/surrogate/i);
  });
});

describe('catalog tools', () => {
  it('keep name, description, input and output schema, and nothing else', () => {
    const kept = catalogTool({
      name: 'get',
      title: 'Get',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object', properties: { n: { type: 'number' } } },
      annotations: { readOnlyHint: true },
      _meta: { trace: 1 },
    });
    expect(kept).toEqual({
      name: 'get',
      description: '',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object', properties: { n: { type: 'number' } } },
    });
  });

  it('sort by name in code unit order and refuse a name listed twice', () => {
    const tool = (name: string): CatalogTool => ({
      name,
      description: '',
      inputSchema: { type: 'object' },
    });
    expect(sortTools([tool('b'), tool('B'), tool('a')])).toEqual({
      tools: [tool('B'), tool('a'), tool('b')],
    });
    expect(sortTools([tool('a'), tool('b'), tool('a')])).toEqual({
      reason: 'tool "a" is listed twice',
    });
  });
});
