/**
 * How tests reach state: the calls a tenant owner and a vendor make, and nothing else.
 * An owner signs in with the operator grant and creates the tenant (decisions rows 73 and
 * 74), creates inference options and links MCP servers over the console API, consents to
 * a vendor's proposal (2.8, 3.2) and the vendor polls for its install key. Nothing is
 * written into a store (test/house/real-flow.test.ts holds every test to that).
 *
 * One `Send` carries the calls: `injected(app)` through `app.inject`, `fetched(base)` over
 * real HTTP to any running service, so the same flow serves both kinds of harness.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { TestApp } from './app.ts';

/** An answer as the flow reads it: status and parsed JSON body (undefined when empty). */
export interface Exchange {
  readonly status: number;
  readonly body: unknown;
  /** The `Set-Cookie` lines of the answer. */
  readonly cookies: readonly string[];
}

/** Sends one request with an optional bearer and JSON body. */
export type Send = (
  method: string,
  path: string,
  token: string | null,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<Exchange>;

/** The JSON body, the text when it is not JSON, undefined when empty. */
function parse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function headersOf(token: string | null, body: unknown, extra: Record<string, string>) {
  return {
    ...extra,
    ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
  };
}

/** Calls through `app.inject` (no socket). */
export function injected(app: FastifyInstance): Send {
  return async (method, path, token, body, headers = {}) => {
    const response = await app.inject({
      method: method as 'GET',
      url: path,
      headers: headersOf(token, body, headers),
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    const cookies = [response.headers['set-cookie'] ?? []].flat();
    return { status: response.statusCode, body: parse(response.body), cookies };
  };
}

/** Calls over HTTP to the service at `base`. */
export function fetched(base: string): Send {
  const root = base.replace(/\/+$/, '');
  return async (method, path, token, body, headers = {}) => {
    const response = await fetch(`${root}${path}`, {
      method,
      headers: headersOf(token, body, headers),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const cookies = response.headers.getSetCookie();
    return { status: response.status, body: parse(await response.text()), cookies };
  };
}

/** A console user's token on one tenant. */
export interface Owner {
  readonly user: string;
  readonly tenant: string;
  readonly token: string;
  /** `{ authorization: 'Bearer …' }`. */
  readonly headers: { readonly authorization: string };
}

/** An install a test holds the key of, made by consent. */
export interface TestInstall {
  readonly id: string;
  readonly tenant: string;
  /** The install key `ik_…` the vendor's poll answered. */
  readonly key: string;
  /** `{ authorization: 'Bearer ik_…' }`. */
  readonly headers: { readonly authorization: string };
  /** The owner who consented. */
  readonly owner: Owner;
}

/** What `POST /appdoc` answers (2.8). */
export interface Proposed {
  readonly request: string;
  readonly poll_secret: string;
}

/** A small vendor document with one tool `lookup`. */
export function vendorDocument(name = 'Test app'): Record<string, unknown> {
  return {
    appdoc: 1,
    name,
    description: 'An app for session tests',
    tools: [
      {
        name: 'lookup',
        description: 'Looks a word up',
        input_schema: { type: 'object', properties: { word: { type: 'string' } } },
        output_schema: { type: 'object' },
      },
    ],
  };
}

export interface InstallOptions {
  /** The consenting owner; a fresh tenant's owner when absent. */
  readonly owner?: Owner;
  /** The vendor document proposed; `vendorDocument()` when absent. */
  readonly vendor?: Record<string, unknown>;
  /** The tenant config consented to (2.6); inference `default` (made here) when absent. */
  readonly config?: Record<string, unknown>;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The public flow over one `Send`, with the operator grant's token. */
export class PublicFlow {
  readonly send: Send;
  readonly #operator: string;

  constructor(send: Send, operatorToken: string) {
    this.send = send;
    this.#operator = operatorToken;
  }

  /** Sends and expects `status`; answers the body. */
  async expect(
    status: number | readonly number[],
    method: string,
    path: string,
    token: string | null,
    body?: unknown,
  ): Promise<unknown> {
    const answer = await this.send(method, path, token, body);
    const allowed: readonly number[] = typeof status === 'number' ? [status] : status;
    if (!allowed.includes(answer.status)) {
      // No vitest here: the flow serves the bench and soak scripts too.
      const detail = `${answer.status} ${JSON.stringify(answer.body)}`;
      throw new Error(`${method} ${path} answered ${detail}, not ${allowed.join(' or ')}`);
    }
    return answer.body;
  }

  /** A console token for `user` on `tenant` through the operator grant (row 73). */
  async signIn(user: string, tenant: string): Promise<Owner> {
    const answer = await this.expect(200, 'POST', '/console/token', this.#operator, {
      user,
      tenant,
    });
    const { token } = answer as { token: string };
    return { user, tenant, token, headers: bearer(token) };
  }

  /** A fresh tenant owned by a fresh user (`PUT /console/tenant`, row 74). */
  async owner(name = 'Test tenant'): Promise<Owner> {
    const owner = await this.signIn(`u-${randomUUID()}`, `t-${randomUUID().slice(0, 8)}`);
    await this.expect(201, 'PUT', '/console/tenant', owner.token, { name });
    return owner;
  }

  /** `PUT /inferences/{name}` (2.13): the simulated provider unless `body` says otherwise. */
  async option(owner: Owner, name = 'default', body: Record<string, unknown> = {}) {
    await this.expect([200, 201], 'PUT', `/inferences/${name}`, owner.token, {
      provider: 'simulated',
      ...body,
    });
  }

  /** `PUT /connections/{name}` to the MCP server at `endpoint` (3.3); answers the body. */
  async link(
    owner: Owner,
    name: string,
    endpoint: string,
    extra: Record<string, unknown> = {},
  ): Promise<Record<string, unknown>> {
    const body = { name, endpoint, ...extra };
    return (await this.expect([200, 201], 'PUT', `/connections/${name}`, owner.token, body)) as {
      connection: Record<string, unknown>;
    };
  }

  /** `POST /appdoc` (2.8), or `POST /installs/{id}/proposals` with `install`'s key. */
  async propose(doc: Record<string, unknown>, install?: TestInstall): Promise<Proposed> {
    const path = install === undefined ? '/appdoc' : `/installs/${install.id}/proposals`;
    return (await this.expect(201, 'POST', path, install?.key ?? null, doc)) as Proposed;
  }

  /** The owner's `POST /consent/{request}` with `config`, then the vendor's poll (2.8). */
  async consent(
    owner: Owner,
    proposal: Proposed,
    config: Record<string, unknown>,
  ): Promise<{ install: string; key?: string }> {
    await this.expect(200, 'POST', `/consent/${proposal.request}`, owner.token, config);
    const receipt = await this.expect(200, 'POST', '/consent/token', proposal.poll_secret, {
      request: proposal.request,
    });
    return receipt as { install: string; key?: string };
  }

  /** An install through propose, consent and poll. */
  async install(options: InstallOptions = {}): Promise<TestInstall> {
    const owner = options.owner ?? (await this.owner());
    // The option `default` is made here; one the config names is the caller's to make.
    if (options.config?.inference === undefined) await this.option(owner, 'default');
    const config = { inference: 'default', ...options.config };
    const proposal = await this.propose(options.vendor ?? vendorDocument());
    const receipt = await this.consent(owner, proposal, config);
    if (receipt.key === undefined) throw new Error('a new install answered no key');
    return {
      id: receipt.install,
      tenant: owner.tenant,
      key: receipt.key,
      headers: bearer(receipt.key),
      owner,
    };
  }

  /**
   * A new consent for `install` (decisions row 94): the vendor proposes `vendor` for it, the
   * owner consents with `config`; the install and its key are kept.
   */
  async reconsent(
    install: TestInstall,
    vendor: Record<string, unknown>,
    config: Record<string, unknown>,
  ): Promise<void> {
    const proposal = await this.propose(vendor, install);
    const receipt = await this.consent(install.owner, proposal, config);
    if (receipt.install !== install.id)
      throw new Error(`the update made install ${receipt.install}`);
  }
}

/** The public flow of a test app, through `app.inject`. */
export function flowOf(harness: TestApp): PublicFlow {
  const operator = harness.keys.generatedOperatorToken;
  if (operator === undefined) throw new Error('the test app did not generate an operator token');
  return new PublicFlow(injected(harness.app), operator);
}
