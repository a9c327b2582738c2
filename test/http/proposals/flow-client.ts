/**
 * What the vendor-flow suites share: a test app on a hand-moved clock, a vendor document,
 * and the vendor's and the owner's calls over HTTP (`app.inject`).
 */
import { randomUUID } from 'node:crypto';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { ManualClock } from '../../../src/clock.ts';
import type { VendorDocument } from '../../../src/schemas/vendor.ts';
import { startTestApp, type TestApp, type TestAppOptions } from '../../support/app.ts';
import { newOwner, type ConsoleUser } from '../../support/console.ts';
import { flowOf } from '../../support/flow.ts';
import { OpenApiCheck } from '../../support/openapi-check.ts';
import { startPagingServer, type PagingServer } from '../../mcp/peers/paging.ts';

/** What a proposal answers (2.8). */
export interface Proposal {
  readonly request: string;
  readonly poll_secret: string;
  readonly consent_url: string;
  readonly vendor: string;
  readonly expires: number;
  readonly interval: number;
}

/** A test app whose clock the test moves. */
export async function flowApp(
  options: TestAppOptions = {},
): Promise<{ harness: TestApp; clock: ManualClock }> {
  const clock = new ManualClock(Date.UTC(2026, 0, 1) + Math.floor(Math.random() * 1e9));
  return { harness: await startTestApp({ clock, ...options }), clock };
}

/** A vendor document with two tools; names and descriptions are fresh per call. */
export function vendorDoc(overrides: Partial<VendorDocument> = {}): Record<string, unknown> {
  return {
    appdoc: 1,
    name: `Mailer ${randomUUID().slice(0, 8)}`,
    description: 'Sends and searches mail for the user.',
    tools: [
      {
        name: 'search',
        description: 'Search the mailbox.',
        input_schema: {
          type: 'object',
          properties: { query: { type: 'string' }, limit: { type: 'integer' } },
          required: ['query'],
        },
        output_schema: { type: 'object', properties: { hits: { type: 'array' } } },
      },
      {
        name: 'send_mail',
        description: 'Send a message.',
        input_schema: {
          type: 'object',
          properties: { to: { type: 'string' }, body: { type: 'string' } },
          required: ['to', 'body'],
        },
        output_schema: { type: 'object' },
        result_limit: 4096,
        timeout: '30s',
      },
    ],
    ...overrides,
  };
}

/** `POST /appdoc`, expected to succeed. */
export async function propose(harness: TestApp, doc = vendorDoc()): Promise<Proposal> {
  const response = await harness.app.inject({ method: 'POST', url: '/appdoc', payload: doc });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<Proposal>();
}

/** `POST /consent/token` with the proposal's poll secret (or `secret`). */
export function poll(
  harness: TestApp,
  proposal: Pick<Proposal, 'request' | 'poll_secret'>,
  secret = proposal.poll_secret,
): Promise<LightMyRequestResponse> {
  return harness.app.inject({
    method: 'POST',
    url: '/consent/token',
    headers: { authorization: `Bearer ${secret}` },
    payload: { request: proposal.request },
  });
}

/** `POST /consent/{request}` as `user`. */
export function consent(
  harness: TestApp,
  user: ConsoleUser,
  request: string,
  config: Record<string, unknown>,
): Promise<LightMyRequestResponse> {
  return harness.app.inject({
    method: 'POST',
    url: `/consent/${request}`,
    headers: user.headers,
    payload: config,
  });
}

/** A granted proposal: its request, and the install and key the vendor's poll answered. */
export interface Installed {
  readonly request: string;
  readonly install: string;
  readonly key: string;
}

/** A vendor's proposal that `owner` consents to with option `fast`, and its poll's receipt. */
export async function installFor(harness: TestApp, owner: ConsoleUser): Promise<Installed> {
  const proposal = await propose(harness);
  const granted = await consent(harness, owner, proposal.request, { inference: 'fast' });
  expect(granted.statusCode, granted.body).toBe(200);
  const receipt = (await poll(harness, proposal)).json<{ install: string; key: string }>();
  return { request: proposal.request, install: receipt.install, key: receipt.key };
}

/** `POST /installs/{id}/proposals` with the install's key: an update proposal of `doc`. */
export function proposeUpdate(
  harness: TestApp,
  { install, key }: Pick<Installed, 'install' | 'key'>,
  doc: Record<string, unknown> = vendorDoc(),
): Promise<LightMyRequestResponse> {
  return harness.app.inject({
    method: 'POST',
    url: `/installs/${install}/proposals`,
    headers: keyHeaders(key),
    payload: doc,
  });
}

/** A fresh tenant owner with an inference option named `fast` (through `PUT /inferences`). */
export async function ownerWithOption(harness: TestApp): Promise<ConsoleUser> {
  const owner = await newOwner(harness);
  await flowOf(harness).option(owner, 'fast');
  return owner;
}

/** The tools a linked test connection's catalog holds. */
export const CONNECTION_TOOLS: Tool[] = [
  {
    name: 'read_file',
    description: 'Read a file.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
  },
  {
    name: 'search',
    description: 'Search files.',
    inputSchema: { type: 'object', properties: { pattern: { type: 'string' } } },
  },
];

/** An in-process MCP server offering `CONNECTION_TOOLS`; the caller closes it. */
export function startToolServer(): Promise<PagingServer> {
  return startPagingServer(CONNECTION_TOOLS, 10);
}

/** Links connection `name` for `owner` to the MCP server at `endpoint` (`PUT /connections/{id}`). */
export async function linkConnection(
  harness: TestApp,
  owner: ConsoleUser,
  name: string,
  endpoint: string,
): Promise<void> {
  const answer = await flowOf(harness).link(owner, name, endpoint);
  expect(answer).toMatchObject({ connection: { state: 'linked' } });
}

/** Bearer headers for an install key. */
export function keyHeaders(key: string): { authorization: string } {
  return { authorization: `Bearer ${key}` };
}

/** The served OpenAPI document as a checker of real answers. */
export async function openApi(harness: TestApp): Promise<OpenApiCheck> {
  const response = await harness.app.inject({ method: 'GET', url: '/openapi.json' });
  return new OpenApiCheck(response.json());
}

/** Asserts `response` is documented for `method url`: status, media type and body schema. */
export function conforms(
  check: OpenApiCheck,
  method: string,
  url: string,
  response: LightMyRequestResponse,
): void {
  const header = response.headers['content-type'];
  const type = typeof header === 'string' ? header : '';
  const json = type.includes('json') && response.body !== '';
  check.answer(method, url, response.statusCode, type, json ? response.json() : response.body);
}
