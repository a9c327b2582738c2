/**
 * Catalog bounds over HTTP: a server whose catalog is out of bounds (3,000 tools, 3 MB,
 * a name that breaks decisions row 19, a schema that is not JSON Schema) is refused with a
 * 502 naming the limit or rule; nothing is stored, a kept connection stays as it was, and
 * no answer carries the server's words.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Connection } from '../../../src/schemas/connections.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner, type ConsoleUser } from '../../support/console.ts';
import { sampleTools, startPagingServer, type PagingServer } from '../../mcp/peers/paging.ts';
import { ConsoleClient, expectOk, expectProblem } from '../console/console-client.ts';

/** Words only the server says. */
const PEER_TEXT = 'catalog-peer-words-51be';

let harness: TestApp;
let client: ConsoleClient;
let peer: PagingServer;
let owner: ConsoleUser;
beforeAll(async () => {
  [harness, peer] = await Promise.all([startTestApp(), startPagingServer(sampleTools(3), 10)]);
  client = await ConsoleClient.of(harness);
  owner = await newOwner(harness);
});
afterAll(async () => {
  await Promise.all([harness.close(), peer.close()]);
});

const put = (name: string) =>
  client.call({
    method: 'PUT',
    url: `/connections/${name}`,
    headers: owner.headers,
    payload: { name, endpoint: peer.endpoint, timeout: '20s' },
  });
const list = async () =>
  expectOk(
    await client.call({ method: 'GET', url: '/connections', headers: owner.headers }),
    200,
  ) as Connection[];

const CASES: readonly {
  readonly what: string;
  readonly tools: () => Tool[];
  readonly pageSize: number;
  readonly code: string;
  readonly names: string;
}[] = [
  {
    what: 'a catalog of 3,000 tools',
    tools: () => sampleTools(3000, () => PEER_TEXT),
    pageSize: 3000,
    code: 'upstream_catalog_too_large',
    names: 'more than 1000 tools, the limit',
  },
  {
    what: 'a catalog of 3 MB',
    tools: () => sampleTools(30, () => `${PEER_TEXT}${'x'.repeat(100_000)}`),
    pageSize: 30,
    code: 'upstream_catalog_too_large',
    names: '2097152 bytes (2 MiB), the limit',
  },
  {
    what: 'a tool name that breaks row 19',
    tools: () => [
      ...sampleTools(2),
      { name: `not a name ${PEER_TEXT}`, inputSchema: { type: 'object' } },
    ],
    pageSize: 10,
    code: 'upstream_unreadable',
    names: 'tool 3 has a name that breaks ^[a-zA-Z0-9_-]{1,64}$ (decisions row 19)',
  },
  {
    what: 'an input schema that is not JSON Schema',
    tools: () => [
      ...sampleTools(2),
      {
        name: 'broken',
        description: PEER_TEXT,
        inputSchema: { type: 'object', properties: { [PEER_TEXT]: { type: 'objekt' } } },
      },
    ],
    pageSize: 10,
    code: 'upstream_unreadable',
    names: 'the inputSchema of tool broken is not a valid JSON Schema',
  },
];

describe('PUT /connections to a server whose catalog is out of bounds', () => {
  it.each(CASES)('refuses $what with a 502 naming the limit, storing nothing', async (out) => {
    peer.setTools(out.tools());
    peer.setPageSize(out.pageSize);
    const before = await list();
    const answer = await put('fresh');
    expectProblem(answer, 502, out.code);
    expect((answer.body as { message: string }).message).toContain(out.names);
    expect(answer.text).not.toContain(PEER_TEXT);
    expect(await list()).toEqual(before);
    expect(before.map((connection) => connection.name)).not.toContain('fresh');
  });

  it('leaves a kept connection as it was when its server grows out of bounds', async () => {
    peer.setTools(sampleTools(3));
    peer.setPageSize(10);
    const kept = (expectOk(await put('kept'), 201) as { connection: Connection }).connection;
    peer.setTools(sampleTools(3000));
    peer.setPageSize(500);
    expectProblem(await put('kept'), 502, 'upstream_catalog_too_large');
    expect(await list()).toEqual([kept]);
  });
});
