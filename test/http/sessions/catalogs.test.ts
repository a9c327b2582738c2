/**
 * The catalog check at session start (3.1 row 1, 3.3, §7 POST /sessions; decisions row
 * 47) against real MCP servers on loopback: an unchanged catalog opens, a changed one is
 * 409 `catalog_changed` naming the connection, a server that cannot be read is 502, and a
 * conflict outranks an upstream failure.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionValue } from '../../../src/resources/types.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { createInstall, linkConnection } from '../../support/install.ts';
import { sampleTools, startPagingServer, type PagingServer } from '../../mcp/peers/paging.ts';
import { SessionClient } from './session-client.ts';

let harness: TestApp;
let client: SessionClient;
let docs: PagingServer;
let stopped: PagingServer;

beforeAll(async () => {
  harness = await startTestApp();
  client = await SessionClient.listen(harness);
  docs = await startPagingServer(sampleTools(3), 2);
  stopped = await startPagingServer(sampleTools(1), 2);
});
afterAll(async () => {
  await docs.close();
  await harness.close();
});

const tenant = () => `t-${randomUUID().slice(0, 8)}`;
const open = (headers: Record<string, string>) =>
  ({ method: 'POST', path: '/sessions?principal=ada', headers }) as const;

describe('session start checks connected catalogs', () => {
  it('opens while the catalog is unchanged, listing the extra tool', async () => {
    const t = tenant();
    await linkConnection(harness, t, 'docs', docs.endpoint);
    const install = await createInstall(harness, {
      tenant: t,
      extraTools: [{ connection: 'docs', tool: 'tool-01' }],
    });
    const opened = await client.open(install);
    const [first] = await harness.stores.log.read(opened.session, { from: 1 });
    expect(JSON.parse(first?.body ?? '{}')).toMatchObject({
      tools: [
        { name: 'lookup', source: 'vendor' },
        { name: 'docs__tool-01', source: 'connection:docs' },
      ],
    });
  });

  it('answers 409 catalog_changed once the server changed its tools, and opens again after', async () => {
    const t = tenant();
    await linkConnection(harness, t, 'docs', docs.endpoint);
    const install = await createInstall(harness, {
      tenant: t,
      extraTools: [{ connection: 'docs', tool: 'tool-00' }],
    });
    docs.setTools(sampleTools(3, (i) => `Changed tool ${i}`));
    try {
      const problem = await client.refused(open(install.headers), 409, 'catalog_changed');
      expect(problem.connections).toEqual(['docs']);
    } finally {
      docs.setTools(sampleTools(3));
    }
    await client.open(install);
  });

  it('answers 502 when a connected server cannot be read; a change still wins (409)', async () => {
    const t = tenant();
    await linkConnection(harness, t, 'docs', docs.endpoint);
    await linkConnection(harness, t, 'down', stopped.endpoint);
    await stopped.close();
    const unreadable = await createInstall(harness, {
      tenant: t,
      extraTools: [{ connection: 'down', tool: 'tool-00' }],
    });
    const problem = await client.refused(open(unreadable.headers), 502, 'upstream_unreachable');
    expect(String(problem.message)).toContain('127.0.0.1');

    const both = await createInstall(harness, {
      tenant: t,
      extraTools: [
        { connection: 'down', tool: 'tool-00' },
        { connection: 'docs', tool: 'tool-00' },
      ],
    });
    docs.setTools(sampleTools(2));
    try {
      const changed = await client.refused(open(both.headers), 409, 'catalog_changed');
      expect(changed.connections).toEqual(['docs']);
    } finally {
      docs.setTools(sampleTools(3));
    }
  });

  it('answers 502 for a connection still authorizing and 409 for one that is gone', async () => {
    const t = tenant();
    const linked = await linkConnection(harness, t, 'docs', docs.endpoint);
    const authorizing: ConnectionValue = { ...linked, state: 'authorizing' };
    await harness.stores.control.write([
      { op: 'put', kind: 'connection', scope: t, id: 'docs', value: authorizing, expect: null },
    ]);
    const install = await createInstall(harness, {
      tenant: t,
      extraTools: [{ connection: 'docs', tool: 'tool-00' }],
    });
    await client.refused(open(install.headers), 502, 'connection_authorizing');

    const gone = await createInstall(harness, {
      tenant: tenant(),
      extraTools: [{ connection: 'nowhere', tool: 'tool-00' }],
    });
    const problem = await client.refused(open(gone.headers), 409, 'catalog_changed');
    expect(problem.connections).toEqual(['nowhere']);
  });

  it('sends a bearer connection its secret, and answers 502 once the secret is gone', async () => {
    const t = tenant();
    const linked = await linkConnection(harness, t, 'docs', docs.endpoint);
    const bearer: ConnectionValue = { ...linked, auth: { kind: 'bearer', credential: 'docs-key' } };
    await harness.stores.control.write([
      { op: 'put', kind: 'connection', scope: t, id: 'docs', value: bearer, expect: null },
    ]);
    const install = await createInstall(harness, {
      tenant: t,
      extraTools: [{ connection: 'docs', tool: 'tool-00' }],
    });
    await client.refused(open(install.headers), 502, 'upstream_unreadable');
    await harness.stores.control.putSecretValue(t, 'docs-key', 'sk-test');
    await client.open(install);
  });
});
