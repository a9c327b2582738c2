/**
 * A console token for one tenant never reads or changes another tenant's resources
 *. Every route the OpenAPI document secures with `consoleToken` is
 * called with tenant A's owner token, addressing tenant B's resources by their names
 * (names A holds nothing under). No answer may carry B's data, and B's stored state must
 * be exactly as before. Routes added later are swept the same way: the list comes from
 * the served document, not from this file.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResourceKind } from '../../../src/resources/types.ts';
import { startTestApp, type TestApp } from '../../support/app.ts';
import { newOwner, type ConsoleUser } from '../../support/console.ts';
import { flowOf } from '../../support/flow.ts';
import { sampleTools, startPagingServer, type PagingServer } from '../../mcp/peers/paging.ts';
import {
  ConsoleClient,
  openApiDocument,
  expectOk,
  expectProblem,
  type Answer,
  type Call,
} from './console-client.ts';

interface Operation {
  security?: Record<string, string[]>[];
  requestBody?: unknown;
  parameters?: { in: string; name: string; required?: boolean }[];
}

let harness: TestApp;
let client: ConsoleClient;
let document: Record<string, unknown>;
let a: ConsoleUser;
let b: ConsoleUser;

/** The one name B uses for its secret, option and connection; A holds nothing under it. */
const name = `b${randomBytes(4).toString('hex')}`;
const bSecretValue = `b-secret-${randomUUID()}`;
const bTenantName = `Tenant B ${randomUUID()}`;
/** B's MCP server; its endpoint is B's data. */
let bServer: PagingServer;
let bEndpoint: string;
const bCompactAt = 7_654_321;
let bInstall: string;

const KINDS: readonly ResourceKind[] = [
  'membership',
  'install',
  'proposal',
  'connection',
  'inference',
  'secret',
  'oauth_state',
];

/** Everything stored for B, so "unchanged" is one equality. */
async function snapshotOfB(): Promise<unknown> {
  const control = harness.stores.control;
  return {
    tenant: await control.get('tenant', '', b.tenant),
    resources: await Promise.all(KINDS.map((kind) => control.list(kind, b.tenant))),
    value: await control.readSecretValue(b.tenant, name),
    usage: await control.readUsage(b.tenant, '2026-01-01', '2026-12-31'),
  };
}

async function seedB(): Promise<void> {
  b = await newOwner(harness, bTenantName);
  const call = (method: Call['method'], url: string, payload: unknown) =>
    client.call({ method, url, headers: b.headers, payload });
  expectOk(await call('PUT', `/secrets/${name}`, { value: bSecretValue }), 201);
  const option = { provider: 'simulated', compact_at: bCompactAt, credential: name };
  expectOk(await call('PUT', `/inferences/${name}`, option), 201);
  // B links its MCP server with the secret as bearer and consents to an install on it.
  bServer = await startPagingServer(sampleTools(2), 10);
  bEndpoint = bServer.endpoint;
  expectOk(
    await call('PUT', `/connections/${name}`, { name, endpoint: bEndpoint, credential: name }),
    201,
  );
  const flow = flowOf(harness);
  const install = await flow.install({
    owner: b,
    config: { inference: name, extra_tools: [{ connection: name, tool: 'tool-00' }] },
  });
  bInstall = install.id;
  // One session of B, talked to and archived: B has usage.
  const opened = (await flow.expect(201, 'POST', '/sessions?principal=ada', install.key, {})) as {
    session: string;
    token: string;
  };
  await flow.expect(200, 'POST', `/sessions/${opened.session}/events`, opened.token, [
    { kind: { name: 'message.submitted', version: 1 }, body: { text: 'hello from B' } },
  ]);
  await until(async () => {
    const status = await flow.expect(
      200,
      'GET',
      `/sessions/${opened.session}/status`,
      opened.token,
    );
    return (status as { live: { phase: string } }).live.phase === 'idle';
  });
  await flow.expect(200, 'POST', `/sessions/${opened.session}/archive`, install.key);
  await until(async () => {
    const rows = (await call('GET', '/usage?from=2026-01-01&to=2026-12-31', undefined)).body as {
      events: number;
    }[];
    return (rows[0]?.events ?? 0) > 0;
  });
}

/** Waits until `done` answers true. */
async function until(done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error('B was never ready');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

beforeAll(async () => {
  harness = await startTestApp();
  client = await ConsoleClient.of(harness);
  document = await openApiDocument(harness);
  a = await newOwner(harness, 'Tenant A');
  await seedB();
});
afterAll(async () => {
  await harness.close();
  await bServer.close();
});

/** Every (method, path template) the document secures with a console token. */
function consoleRoutes(): { method: Call['method']; template: string; operation: Operation }[] {
  const paths = document.paths as Record<string, Record<string, Operation>>;
  return Object.entries(paths)
    .flatMap(([template, operations]) =>
      Object.entries(operations).map(([method, operation]) => ({
        method: method.toUpperCase() as Call['method'],
        template,
        operation,
      })),
    )
    .filter(({ operation }) => operation.security?.some((scheme) => 'consoleToken' in scheme))
    .sort((x, y) => `${x.template} ${x.method}`.localeCompare(`${y.template} ${y.method}`));
}

/** The value B's resource of a path has, by the path's first segment. */
function pathValue(template: string): string {
  if (template.startsWith('/installs/')) return bInstall;
  if (template.startsWith('/console/sessions/')) return randomBytes(36).toString('hex');
  return name;
}

const QUERY_VALUES: Readonly<Record<string, string>> = {
  from: '2026-01-01',
  to: '2026-12-31',
  opened: '1',
};

/** Bodies that aim at B's resources by name; routes not listed get `{}`. */
function bodyFor(method: string, template: string, id: string): unknown {
  switch (`${method} ${template}`) {
    case 'PUT /secrets/{id}':
      return { value: `a-value-${randomUUID()}` };
    case 'PUT /inferences/{id}':
      return { provider: 'simulated', credential: name };
    case 'PUT /connections/{id}':
      return { name: id, endpoint: 'http://127.0.0.1:9/mcp', credential: name };
    case 'PUT /console/tenant':
      return { name: 'Tenant A', members: [{ user: b.user, role: 'owner' }] };
    case 'POST /consent/{request}':
    case 'PUT /installs/{id}':
      return { inference: name, extra_tools: [{ connection: name, tool: 'search' }] };
    default:
      return {};
  }
}

/** B's data that must never reach A: none of it is in A's requests. */
function markersOfB(): string[] {
  return [b.tenant, bTenantName, b.user, bSecretValue, bEndpoint, String(bCompactAt)];
}

async function sweep(route: ReturnType<typeof consoleRoutes>[number]): Promise<Answer> {
  const { method, template, operation } = route;
  const id = pathValue(template);
  const path = template.replace(/\{[^}]+\}/g, id);
  const query = (operation.parameters ?? [])
    .filter((parameter) => parameter.in === 'query')
    .map((parameter) => `${parameter.name}=${QUERY_VALUES[parameter.name] ?? 'x'}`);
  const url = query.length === 0 ? path : `${path}?${query.join('&')}`;
  return client.call({
    method,
    url,
    headers: a.headers,
    ...(operation.requestBody === undefined ? {} : { payload: bodyFor(method, template, id) }),
  });
}

describe('a console token for tenant A', () => {
  it('is not issued for tenant B to a user who is not a member there', async () => {
    const answer = await client.call({
      method: 'POST',
      url: '/console/token',
      headers: { authorization: `Bearer ${String(harness.keys.generatedOperatorToken)}` },
      payload: { user: a.user, tenant: b.tenant },
    });
    expectProblem(answer, 403, 'not_member');
  });

  it("never reads or changes tenant B's resources on any console route", async () => {
    const routes = consoleRoutes();
    // The routes below must all be there; routes added later join the sweep by themselves.
    const listed = new Set(routes.map((route) => `${route.method} ${route.template}`));
    for (const route of [
      'PUT /console/tenant',
      'GET /console/memberships',
      'PUT /secrets/{id}',
      'GET /secrets',
      'DELETE /secrets/{id}',
      'PUT /inferences/{id}',
      'GET /inferences',
      'GET /inferences/{id}',
      'DELETE /inferences/{id}',
      'GET /usage',
    ]) {
      expect(listed).toContain(route);
    }
    const before = await snapshotOfB();
    // Reads and deletes first, while A holds nothing under B's names; then writes.
    const ordered = [
      ...routes.filter((route) => route.method === 'GET' || route.method === 'DELETE'),
      ...routes.filter((route) => route.method !== 'GET' && route.method !== 'DELETE'),
    ];
    const answers = new Map<string, Answer>();
    for (const route of ordered) {
      const answer = await sweep(route);
      const label = `${route.method} ${route.template}`;
      answers.set(label, answer);
      expect(answer.status, `${label}: ${answer.text}`).not.toBe(500);
      for (const marker of markersOfB()) {
        expect(answer.text, `${label} leaks ${marker}`).not.toContain(marker);
      }
    }
    expect(await snapshotOfB()).toEqual(before);
    // B's secret value reached no answer of the whole file, and no log line.
    for (const text of client.texts) expect(text).not.toContain(bSecretValue);
    expect(harness.logs.text()).not.toContain(bSecretValue);

    // The answers of the routes listed above, one by one.
    const at = (label: string): Answer => {
      const answer = answers.get(label);
      if (answer === undefined) throw new Error(`${label} was not swept`);
      return answer;
    };
    expect(expectOk(at('GET /secrets'), 200)).toEqual([]);
    expect(expectOk(at('GET /inferences'), 200)).toEqual([]);
    expect(expectOk(at('GET /usage'), 200)).toEqual([]);
    expect(expectOk(at('GET /console/memberships'), 200)).toEqual([
      { tenant: a.tenant, role: 'owner' },
    ]);
    expectProblem(at('GET /inferences/{id}'), 404, 'inference_not_found');
    expectProblem(at('DELETE /inferences/{id}'), 404, 'inference_not_found');
    expectProblem(at('DELETE /secrets/{id}'), 404, 'secret_not_found');
    // B's secret is no credential A can name.
    expectProblem(at('PUT /inferences/{id}'), 400, 'unknown_secret', 'body.credential');
    // What A writes under B's names is A's own.
    expect(expectOk(at('PUT /secrets/{id}'), 201)).toEqual({ outcome: 'created' });
    expect(await harness.stores.control.get('secret', a.tenant, name)).not.toBeNull();
    expect(expectOk(at('PUT /console/tenant'), 200)).toEqual({ outcome: 'replaced' });
  });
});
