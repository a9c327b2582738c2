/**
 * The SDK's `OAuthClientProvider` for one connection (interface §3.3, decisions row 45).
 *
 * The SDK drives the flow (`auth()` in `@modelcontextprotocol/sdk/client/auth.js`): on a
 * 401 it discovers the authorization server, registers a client when none is stored
 * (RFC 7591), refreshes a stored token set, or starts an authorization code flow with PKCE
 * and asks this provider to "redirect". A server-side service cannot redirect anyone, so
 * the provider captures the URL for the PUT's answer (`authorize`) and persists the
 * pending authorization the callback will need, under a random single-use `state`.
 *
 * One provider serves one flow: a link being started (`begin`), an authorization code
 * being exchanged (`finish`, which takes its client and PKCE verifier from the pending
 * authorization instead of the store) or a fresh authorization URL being minted (`fresh`,
 * which ignores the stored tokens so the SDK cannot simply refresh them).
 */
import type {
  OAuthClientProvider,
  OAuthDiscoveryState,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientMetadata } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Clock, Entropy } from '../clock.ts';
import type {
  ConnectionRef,
  OAuthStateStore,
  PendingAuthorization,
  StoredClient,
  StoredTokens,
} from './oauth-state.ts';

/** The path of the one callback every connection shares (notes §1 mapping, row 45). */
export const CALLBACK_PATH = '/connections/callback';

/** What a provider is for; see the module comment. */
export type ProviderMode =
  | { readonly kind: 'begin' }
  | { readonly kind: 'fresh' }
  | { readonly kind: 'finish'; readonly pending: PendingAuthorization };

export interface ConnectionOAuthProviderOptions {
  readonly store: OAuthStateStore;
  readonly ref: ConnectionRef;
  readonly endpoint: string;
  /** The service's `BASE_URL` (decisions row 1), without a trailing slash. */
  readonly baseUrl: string;
  /** Where the browser goes after the callback. */
  readonly returnTo: string;
  readonly clock: Clock;
  readonly entropy: Entropy;
  /** How long an authorization URL stays good, in ms. */
  readonly authorizationTtlMs: number;
  readonly mode: ProviderMode;
}

/** An `OAuthClientProvider` bound to one (tenant, connection); see the module comment. */
export class ConnectionOAuthProvider implements OAuthClientProvider {
  readonly #options: ConnectionOAuthProviderOptions;
  #state: string | undefined;
  #verifier: string | undefined;
  #client: StoredClient | undefined;
  #discovery: OAuthDiscoveryState | undefined;
  #authorizeUrl: URL | undefined;
  #inFlow = false;

  constructor(options: ConnectionOAuthProviderOptions) {
    this.#options = options;
    if (options.mode.kind === 'finish') this.#discovery = options.mode.pending.discovery;
  }

  /** The authorization URL the SDK asked to redirect to, once it did. */
  get authorizeUrl(): URL | undefined {
    return this.#authorizeUrl;
  }

  /** True while the SDK's authorization flow is running and has neither tokens nor a URL yet. */
  get inFlow(): boolean {
    return this.#inFlow;
  }

  get redirectUrl(): string {
    return `${this.#options.baseUrl}${CALLBACK_PATH}`;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'agent-session-service',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }

  /** Row 45: a random handle, single use through `takePending`. */
  state(): string {
    this.#state = this.#options.entropy.bytes(32).toString('base64url');
    return this.#state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    // The SDK reads this first thing in every auth() run: the flow has begun.
    this.#inFlow = true;
    return this.#discovery;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.#discovery = state;
  }

  async clientInformation(): Promise<StoredClient | undefined> {
    const { mode, store, ref } = this.#options;
    this.#client = mode.kind === 'finish' ? mode.pending.client : await store.loadClient(ref);
    return this.#client;
  }

  async saveClientInformation(client: StoredClient): Promise<void> {
    this.#client = client;
    await this.#options.store.saveClient(this.#options.ref, client);
  }

  async tokens(): Promise<StoredTokens | undefined> {
    if (this.#options.mode.kind === 'fresh') return undefined;
    return this.#options.store.loadTokens(this.#options.ref);
  }

  async saveTokens(tokens: StoredTokens): Promise<void> {
    this.#inFlow = false;
    const { mode, store, ref } = this.#options;
    // The code was issued to the pending authorization's client: it is the connection's now.
    if (mode.kind === 'finish') await store.saveClient(ref, mode.pending.client);
    await store.saveTokens(ref, tokens);
  }

  saveCodeVerifier(verifier: string): void {
    this.#verifier = verifier;
  }

  codeVerifier(): string {
    const { mode } = this.#options;
    const verifier = mode.kind === 'finish' ? mode.pending.verifier : this.#verifier;
    if (verifier === undefined) throw new Error('no PKCE verifier for this authorization');
    return verifier;
  }

  async redirectToAuthorization(url: URL): Promise<void> {
    const { store, ref, endpoint, returnTo, clock, authorizationTtlMs } = this.#options;
    if (this.#state === undefined || this.#verifier === undefined || this.#client === undefined) {
      throw new Error('the SDK asked to authorize before minting state, verifier and client');
    }
    await store.savePending({
      state: this.#state,
      tenant: ref.tenant,
      connection: ref.connection,
      endpoint,
      returnTo,
      verifier: this.#verifier,
      client: this.#client,
      discovery: this.#discovery,
      expires: clock.now() + authorizationTtlMs,
    });
    this.#authorizeUrl = url;
    this.#inFlow = false;
  }

  async invalidateCredentials(
    scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery',
  ): Promise<void> {
    const { store, ref, mode } = this.#options;
    if (scope === 'verifier' || scope === 'all') this.#verifier = undefined;
    if (scope === 'discovery' || scope === 'all') this.#discovery = undefined;
    // A refused code exchange speaks of the pending authorization's client and code, not of
    // the connection's stored credentials: a forged callback must not unlink a connection.
    if (mode.kind === 'finish') return;
    if (scope === 'client' || scope === 'tokens' || scope === 'all') await store.forget(ref, scope);
  }
}
