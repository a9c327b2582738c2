/**
 * The bounds on a discovered catalog as pure checks, then against a real
 * MCP server on loopback: too many tools, too many bytes, a name that breaks decisions
 * row 19, a schema that is not JSON Schema. Refusals name the limit or rule, never the
 * server's text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ManualClock } from '../../src/clock.ts';
import type { CatalogTool } from '../../src/schemas/connections.ts';
import {
  MAX_CATALOG_BYTES,
  MAX_CATALOG_TOOLS,
  catalogProblem,
  schemaProblem,
} from '../../src/mcp/catalog-bounds.ts';
import { discoverCatalog } from '../../src/mcp/discover.ts';
import { loopbackEgress } from '../support/egress.ts';
import { sampleTools, startPagingServer, type PagingServer } from './peers/paging.ts';

/** Words only the server says. */
const PEER_TEXT = 'peer-words-9c1d';

const tool = (name: string, inputSchema: Record<string, unknown> = { type: 'object' }) =>
  ({ name, description: PEER_TEXT, inputSchema }) satisfies CatalogTool;

describe('the schema check', () => {
  it('reads JSON Schema 2020-12 by default and draft-07 when declared', () => {
    expect(schemaProblem({ type: 'object', properties: { a: { type: 'string' } } })).toBe(
      undefined,
    );
    expect(
      schemaProblem({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        prefixItems: [{}],
      }),
    ).toBeUndefined();
    expect(
      schemaProblem({
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        additionalProperties: false,
      }),
    ).toBeUndefined();
  });

  it('refuses what is not a valid JSON Schema, saying where only in the detail', () => {
    const problem = schemaProblem({
      type: 'object',
      properties: { [PEER_TEXT]: { type: 'objekt' } },
    });
    expect(problem?.reason).toMatch(/is not a valid JSON Schema/);
    expect(problem?.reason).not.toContain(PEER_TEXT);
    expect(problem?.detail).toContain(PEER_TEXT);
    expect(schemaProblem({ type: 'object', required: 'a' })).toBeDefined();
    expect(schemaProblem({ type: 'object', items: [{}] })).toBeDefined();
  });

  it('refuses a dialect it does not read', () => {
    expect(
      schemaProblem({ $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' })?.reason,
    ).toBe('declares a $schema other than JSON Schema 2020-12 or draft-07');
  });
});

describe('the catalog check', () => {
  it('passes names of row 19 and refuses any other without repeating it', () => {
    expect(catalogProblem([tool('get_order-2'), tool('x'.repeat(64))])).toBeUndefined();
    for (const name of ['', 'x'.repeat(65), `has space ${PEER_TEXT}`, 'dot.ted', 'ünï']) {
      const problem = catalogProblem([tool('fine'), tool(name)]);
      expect(problem?.reason).toBe(
        'tool 2 has a name that breaks ^[a-zA-Z0-9_-]{1,64}$ (decisions row 19)',
      );
    }
  });

  it('names the tool and field whose schema is invalid', () => {
    const outputBroken = { ...tool('ok'), outputSchema: { type: 'object', properties: 3 } };
    expect(catalogProblem([tool('ok'), outputBroken])?.reason).toMatch(
      /^the outputSchema of tool ok is not a valid JSON Schema/,
    );
    expect(catalogProblem([tool('a', { type: 'object', minProperties: -1 })])?.reason).toMatch(
      /^the inputSchema of tool a is not a valid JSON Schema/,
    );
  });

  it(`refuses more than ${MAX_CATALOG_TOOLS} tools`, () => {
    const many = Array.from({ length: MAX_CATALOG_TOOLS + 1 }, (_, i) => tool(`t${i}`));
    expect(catalogProblem(many)?.reason).toBe('it lists more than 1000 tools, the limit');
    expect(catalogProblem(many.slice(1))).toBeUndefined();
  });
});

describe('discovering a catalog out of bounds', () => {
  let peer: PagingServer;
  beforeAll(async () => {
    peer = await startPagingServer([], 1000);
  });
  afterAll(async () => {
    await peer.close();
  });

  const discover = () =>
    discoverCatalog({
      endpoint: peer.endpoint,
      timeoutMs: 20_000,
      clock: new ManualClock(),
      egress: loopbackEgress(),
    });

  /** `count` tools whose descriptions take `bytes` each. */
  const heavy = (count: number, bytes: number): Tool[] =>
    sampleTools(count, () => `${PEER_TEXT}${'x'.repeat(bytes)}`);

  it('refuses 3,000 tools, in one page or many, naming the limit', async () => {
    for (const pageSize of [3000, 500]) {
      peer.setTools(sampleTools(3000, () => PEER_TEXT));
      peer.setPageSize(pageSize);
      const failure = await discover().catch((error: unknown) => error);
      expect(failure).toMatchObject({
        code: 'upstream_catalog_too_large',
        status: 502,
        message: `MCP server at ${peer.endpoint} offers a catalog over the service's bounds: it lists more than 1000 tools, the limit`,
      });
    }
    // Page by page, discovery stops at the first page past the limit.
    expect(peer.cursors.at(-1)).toBe('p2');
  });

  it('refuses 3 MB of tools, in one answer or across pages, naming the limit', async () => {
    // One 3 MB answer is cut off as it streams in; pages are counted as they come.
    for (const [pageSize, how] of [
      [30, 'its answers exceed'],
      [3, 'its tools take more than'],
    ] as const) {
      peer.setTools(heavy(30, 100_000));
      peer.setPageSize(pageSize);
      const failure = await discover().catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: 'upstream_catalog_too_large', status: 502 });
      expect((failure as Error).message).toContain(how);
      expect((failure as Error).message).toContain(`${MAX_CATALOG_BYTES} bytes (2 MiB), the limit`);
      expect((failure as Error).message).not.toContain(PEER_TEXT);
    }
  });

  it('accepts a catalog just within both limits', async () => {
    peer.setTools(heavy(20, 90_000));
    peer.setPageSize(5);
    expect((await discover()).tools).toHaveLength(20);
  });

  it('refuses a bad name or schema as unreadable, without the server text', async () => {
    for (const broken of [
      { ...tool(`bad name ${PEER_TEXT}`) },
      tool('fine', { type: 'object', properties: { [PEER_TEXT]: { type: 'objekt' } } }),
    ]) {
      peer.setTools([...sampleTools(2), broken as Tool]);
      peer.setPageSize(10);
      const failure = await discover().catch((error: unknown) => error);
      expect(failure).toMatchObject({ code: 'upstream_unreadable', status: 502 });
      expect((failure as Error).message).not.toContain(PEER_TEXT);
    }
  });
});
