/**
 * `createClient`: one typed client over openapi-fetch for vendors, executors
 * and dashboards. Every call goes through `serviceFetch` (429 and 503 retried after
 * `Retry-After`, every other refusal thrown as a `ServiceProblem`); the helpers below are
 * the calls the protocol makes hard to get right.
 */
import createFetchClient from 'openapi-fetch';
import { bearer, bodyOf, type Api, type ClientCore, type ClientOptions } from './core.ts';
import { waitForConsent, type ConsentOptions } from './consent.ts';
import type { components, paths } from './openapi.ts';
import * as owner from './owner.ts';
import { SessionClient } from './session.ts';
import { DEFAULT_RETRY, serviceFetch, type Fetch, type RetryPolicy } from './transport.ts';

export { bearer, bodyOf, type Api, type ClientOptions } from './core.ts';

type Schemas = components['schemas'];
/** What a vendor proposes (2.5), as `POST /appdoc` takes it. */
export type VendorDocument = paths['/appdoc']['post']['requestBody']['content']['application/json'];
export type Proposal = Schemas['ProposalAnswer'];
export type Receipt = Schemas['PollAnswer'];
export type SessionGrant = Schemas['SessionAnswer'];
/** What `POST /sessions` takes. */
export type OpenSessionBody =
  paths['/sessions']['post']['requestBody']['content']['application/json'];

/** A client of the service with the credentials of `options`. */
export class Client implements ClientCore {
  /** Every route of the document, typed; refusals throw `ServiceProblem`. */
  readonly api: Api;
  readonly options: ClientOptions;
  /** The transport every call of this client goes through. */
  readonly fetch: Fetch;
  readonly retry: RetryPolicy;

  constructor(options: ClientOptions) {
    this.options = options;
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    const base: Fetch = options.fetch ?? ((request) => globalThis.fetch(request));
    this.fetch = serviceFetch(base, this.retry);
    this.api = createFetchClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      fetch: this.fetch,
    });
  }

  /** The same service with other credentials (e.g. the install key a receipt carried). */
  with(credentials: Pick<ClientOptions, 'installKey' | 'consoleToken'>): Client {
    return new Client({ ...this.options, ...credentials });
  }

  /**
   * Proposes `document` (2.8): `POST /appdoc`, or with `install` an update of that install
   * (`POST /installs/{id}/proposals`, install key). Send the owner to `consent_url`.
   */
  async propose(document: VendorDocument, install?: string): Promise<Proposal> {
    if (install === undefined) return bodyOf(this.api.POST('/appdoc', { body: document }));
    return bodyOf(
      this.api.POST('/installs/{id}/proposals', {
        params: { path: { id: install } },
        body: document,
        headers: bearer(this.#installKey()),
      }),
    );
  }

  /** Polls `proposal` until the owner consents (RFC 8628); see `waitForConsent`. */
  waitForConsent(proposal: Proposal, options: ConsentOptions = {}): Promise<Receipt> {
    return waitForConsent(this.api, proposal, options);
  }

  /** Opens a session for `principal` (install key): its id and a first token. */
  async openSession(principal: string, body: OpenSessionBody = {}): Promise<SessionGrant> {
    return bodyOf(
      this.api.POST('/sessions', {
        params: { query: { principal } },
        body,
        headers: bearer(this.#installKey()),
      }),
    );
  }

  /** A fresh token for `session` that writes as `principal` (install key). */
  async mintToken(session: string, principal: string): Promise<SessionGrant> {
    return bodyOf(
      this.api.GET('/sessions/{id}/token', {
        params: { path: { id: session }, query: { principal } },
        headers: bearer(this.#installKey()),
      }),
    );
  }

  /** Archives `session` (install key): nothing lands on it again. */
  async archive(session: string): Promise<Schemas['SessionStatus']> {
    return bodyOf(
      this.api.POST('/sessions/{id}/archive', {
        params: { path: { id: session } },
        headers: bearer(this.#installKey()),
      }),
    );
  }

  /**
   * Rotates the key of `install` (console token, an owner): answers the new key once; the
   * old key and the session tokens minted with it are refused from now on.
   */
  async rotateKey(install: string): Promise<string> {
    const answer = await bodyOf(
      this.api.POST('/installs/{id}/key', {
        params: { path: { id: install } },
        headers: bearer(this.#consoleToken()),
      }),
    );
    return answer.key;
  }

  /**
   * A console token (`POST /console/token`): for an ID token of the console's identity
   * provider, or, with the operator token, for a user. Use it with `with({ consoleToken })`.
   */
  signIn(body: owner.ConsoleTokenBody, operatorToken?: string): Promise<owner.ConsoleToken> {
    return owner.signIn(this.api, body, operatorToken);
  }

  /** The proposal `request` as a member of its tenant reads it (console token). */
  readProposal(request: string): Promise<owner.ConsentRead> {
    return owner.readProposal(this.api, this.#consoleToken(), request);
  }

  /** Consents to `request` with `config` (console token, an owner); answers the install. */
  consent(request: string, config: owner.TenantConfig): Promise<owner.ConsentAnswer> {
    return owner.consent(this.api, this.#consoleToken(), request, config);
  }

  /** Declines `request` (console token, an owner): nothing is installed. */
  decline(request: string): Promise<owner.DeclineAnswer> {
    return owner.decline(this.api, this.#consoleToken(), request);
  }

  /** Appends and tails of one session with `grant`'s token. */
  session(grant: Pick<SessionGrant, 'session' | 'token'>): SessionClient {
    return new SessionClient(this, grant.session, grant.token);
  }

  #installKey(): string {
    if (this.options.installKey === undefined) throw new Error('this client holds no install key');
    return this.options.installKey;
  }

  #consoleToken(): string {
    if (this.options.consoleToken === undefined)
      throw new Error('this client holds no console token');
    return this.options.consoleToken;
  }
}

/** A client of the service at `options.baseUrl` with the credentials given. */
export function createClient(options: ClientOptions): Client {
  return new Client(options);
}
