/**
 * The reference page's examples work as shipped: every request example of the served
 * document, sent to a running service in the order of the story they tell, answers 2xx,
 * and every answer fits the document. Only what the story made and a reader would fill in
 * is put into the examples: path ids, credentials, the MCP server's address (here one on
 * loopback) and the executor's public key (its private half signs the executor's
 * assertion).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEverything, type EverythingServer } from '../mcp/peers/everything.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { assertion, executorSpec, newExecutor } from '../support/executor.ts';
import { OpenApiCheck } from '../support/openapi-check.ts';
import { allOperations, type Document, type Json } from './openapi-walk.ts';

/** Operations the story does not send, and why; each is sent by the test named. */
const NOT_SENT: Readonly<Record<string, string>> = {
  'POST /connections/{id}/authorize':
    'needs an MCP server that asks for OAuth (test/http/connections/oauth.test.ts)',
  'GET /connections/callback':
    "needs an authorization server's redirect (test/http/connections/oauth.test.ts)",
};

let harness: TestApp;
let everything: EverythingServer;
let document: Document;

beforeAll(async () => {
  [harness, everything] = await Promise.all([startTestApp(), startEverything()]);
  const answer = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
  document = answer.json();
}, 60_000);
afterAll(async () => {
  await Promise.all([harness.close(), everything.close()]);
});

/** One request of the story. */
interface Call {
  readonly token?: string | null;
  readonly params?: Readonly<Record<string, string>>;
  /** Changes to the documented example before it is sent (ids the story made). */
  readonly fill?: (example: Json) => unknown;
}

/** Sends operations as documented, records which were sent, checks each answer. */
class Story {
  readonly sent = new Set<string>();
  readonly #check = new OpenApiCheck(document);

  /** Sends `operation` with its documented example; answers the body, throws on non-2xx. */
  async send(operation: string, call: Call = {}): Promise<Json> {
    const [method = '', template = ''] = operation.split(' ');
    const documented = document.paths[template]?.[method.toLowerCase()];
    if (documented === undefined) throw new Error(`${operation} is not documented`);
    const example = documented.requestBody?.content['application/json']?.example;
    if (documented.requestBody !== undefined && example === undefined)
      throw new Error(`${operation} documents no request example`);
    const body =
      example === undefined
        ? undefined
        : (call.fill?.(structuredClone(example) as Json) ?? example);
    const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value =
        call.params?.[name] ?? documented.parameters?.find((p) => p.name === name)?.example;
      if (typeof value !== 'string') throw new Error(`${operation}: no value for {${name}}`);
      return encodeURIComponent(value);
    });
    const query = (documented.parameters ?? [])
      .filter((p) => p.in === 'query' && typeof p.example === 'string')
      .map((p) => `${p.name}=${encodeURIComponent(String(p.example))}`)
      .join('&');
    const url = query === '' ? path : `${path}?${query}`;
    const answer = await harness.app.inject({
      method: method as 'GET',
      url,
      headers: {
        ...(call.token == null ? {} : { authorization: `Bearer ${call.token}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    this.sent.add(operation);
    if (
      answer.statusCode < 200 ||
      answer.statusCode >= 400 ||
      (answer.statusCode >= 300 && !template.startsWith('/docs'))
    )
      throw new Error(
        `${operation} (${url}) answered ${answer.statusCode}: ${answer.body.slice(0, 500)}`,
      );
    const type = answer.headers['content-type'] ?? '';
    const media = type.split(';')[0]?.trim();
    let parsed: unknown = answer.body;
    if (media === 'application/json') {
      parsed = answer.json();
      this.#check.answer(method, path, answer.statusCode, type, parsed);
    } else if (media === 'application/jsonstream') {
      parsed = answer.body
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as unknown);
      for (const line of parsed as unknown[])
        this.#check.answer(method, path, answer.statusCode, type, line);
    }
    return (typeof parsed === 'object' && parsed !== null ? parsed : { text: parsed }) as Json;
  }
}

/** Reads the session's records as `reader` sees them (`ada` reads the head) until one of kind `name` is there. */
async function waitFor(session: string, reader: string, ada: string, name: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const status = await harness.app.inject({
      method: 'GET',
      url: `/sessions/${session}/status`,
      headers: { authorization: `Bearer ${ada}` },
    });
    const { head } = status.json<{ head: number }>();
    const answer = await harness.app.inject({
      method: 'GET',
      url: `/sessions/${session}/events?from=1&to=${head + 1}`,
      headers: { authorization: `Bearer ${reader}` },
    });
    const found = answer.body
      .split('\n')
      .filter((line) => line !== '')
      .map(
        (line) =>
          JSON.parse(line) as { Ok?: { envelope: { kind: { name: string }; cursor: number } } },
      )
      .find((line) => line.Ok?.envelope.kind.name === name);
    if (found?.Ok !== undefined) return found.Ok.envelope;
    if (Date.now() > deadline) throw new Error(`no ${name} landed: ${answer.body}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('the documented examples', () => {
  it('answer 2xx when sent in the order of their story', async () => {
    const story = new Story();
    const operator = harness.keys.generatedOperatorToken ?? '';
    const send = story.send.bind(story);

    for (const path of ['/health/live', '/health', '/health/ready', '/.well-known/jwks.json'])
      await send(`GET ${path}`);
    for (const path of ['/openapi.json', '/docs', '/docs/', '/docs/js/scalar.js', '/metrics'])
      await send(`GET ${path}`);
    for (const path of [
      '/consent/signed-in',
      '/consent/oauth4webapi.js',
      '/consent/client/{module}',
      '/consent/client/executor/{module}',
    ])
      await send(`GET ${path}`);
    for (const path of [
      '/console',
      '/console/oauth4webapi.js',
      '/console/statecharts',
      '/console/statecharts/{machine}',
      '/console/client/{module}',
      '/console/client/executor/{module}',
    ])
      await send(`GET ${path}`);

    // The owner: a console token, the tenant, a secret, an inference option, a connection.
    const { token: owner } = (await send('POST /console/token', { token: operator })) as {
      token: string;
    };
    await send('PUT /console/tenant', { token: owner });
    await send('GET /console/memberships', { token: owner });
    await send('GET /console/tenant', { token: owner });
    await send('PUT /secrets/{id}', { token: owner });
    await send('GET /secrets', { token: owner });
    await send('PUT /inferences/{id}', { token: owner });
    await send('GET /inferences/{id}', { token: owner });
    await send('GET /inferences', { token: owner });
    await send('PUT /connections/{id}', {
      token: owner,
      fill: (body) => ({ ...body, endpoint: everything.endpoint }),
    });
    await send('GET /connections/{id}', { token: owner });
    await send('GET /connections', { token: owner });
    await send('GET /usage', { token: owner });

    // The vendor proposes, the owner consents, the vendor's poll gets the install key.
    const proposal = await send('POST /appdoc');
    const request = { request: String(proposal.request) };
    await send('GET /consent/{request}', { token: owner, params: request });
    const consent = await send('POST /consent/{request}', { token: owner, params: request });
    const receipt = await send('POST /consent/token', {
      token: String(proposal.poll_secret),
      fill: (body) => ({ ...body, ...request }),
    });
    const key = String(receipt.key);
    const install = { id: String(consent.install) };
    await send('GET /appdoc', { token: key });
    await send('GET /installs', { token: owner });
    await send('GET /installs/{id}', { token: owner, params: install });

    // The install opens a session for ada; ada writes; the executor claims a call.
    const worker = await newExecutor('calendar-worker');
    const opened = await send('POST /sessions', {
      token: key,
      fill: (body) => ({ ...body, executor: executorSpec(worker) }),
    });
    const session = { id: String(opened.session) };
    const ada = String(opened.token);
    await send('GET /sessions', { token: key });
    await send('GET /sessions/{id}/token', { token: key, params: session });
    await send('POST /sessions/{id}/events', { token: ada, params: session });
    await send('GET /sessions/{id}/status', { token: ada, params: session });
    await send('GET /sessions/{id}/events', { token: ada, params: session });
    const executorPath = `/sessions/${session.id}/executor/token`;
    const signed = await assertion(worker, `${harness.deps.baseUrl}${executorPath}`);
    const { token: executor } = (await send('GET /sessions/{id}/executor/token', {
      token: signed,
      params: session,
    })) as { token: string };
    // A second message, not an example: it asks the simulated model to call the vendor tool.
    const call = await harness.app.inject({
      method: 'POST',
      url: `/sessions/${session.id}/events`,
      headers: { authorization: `Bearer ${ada}`, 'idempotency-key': 'second-message' },
      payload: [
        {
          kind: { name: 'message.submitted', version: 1 },
          body: { text: '/call find_events {"day":"2026-11-26"}' },
        },
      ],
    });
    expect(call.statusCode, call.body).toBe(200);
    const allowed = await waitFor(session.id, executor, ada, 'invoke.allowed');
    await send('POST /sessions/{id}/executor/claim', {
      token: executor,
      params: session,
      fill: () => ({ cause: allowed.cursor }),
    });
    await send('GET /console/sessions', { token: owner });
    await send('POST /console/sessions/{id}/token', { token: owner, params: session });

    // The vendor proposes an update, which the owner declines; the owner edits the install.
    const update = await send('POST /installs/{id}/proposals', { token: key, params: install });
    await send('POST /consent/{request}/decline', {
      token: owner,
      params: { request: String(update.request) },
    });
    await send('PUT /installs/{id}', { token: owner, params: install });
    const { key: rotated } = (await send('POST /installs/{id}/key', {
      token: owner,
      params: install,
    })) as { key: string };

    // Sessions end; the owner reads the audit; everything is taken down.
    await send('POST /sessions/{id}/archive', { token: rotated, params: session });
    await send('GET /console/sessions/{id}/events', { token: owner, params: session });
    const other = await send('POST /sessions', { token: rotated });
    await send('POST /console/sessions/{id}/archive', {
      token: owner,
      params: { id: String(other.session) },
    });
    await send('DELETE /installs/{id}/key', { token: owner, params: install });
    await send('DELETE /installs/{id}', { token: owner, params: install });
    await send('DELETE /connections/{id}', { token: owner });
    await send('DELETE /inferences/{id}', { token: owner });
    await send('DELETE /secrets/{id}', { token: owner });

    const unsent = allOperations(document)
      .map(([name]) => name)
      .filter((name) => !story.sent.has(name) && !(name in NOT_SENT));
    expect(unsent).toEqual([]);
  }, 60_000);
});
