/**
 * The persistence port of the connection OAuth flow (interface §3.3, decisions rows 41,
 * 43 and 45).
 *
 * Two kinds of state:
 * - per connection (tenant, connection): the client registration (RFC 7591) and the token
 *   set. Both are secrets (a client secret, access and refresh tokens) and the SDK stamps
 *   them with the `issuer` they belong to, which must be stored unchanged.
 * - per authorization handle: the pending authorization an owner's browser carries through
 *   the authorization server as `state`. It binds the tenant, the connection, the endpoint,
 *   the PKCE verifier and the client the code is issued to (row 45), expires, and is taken
 *   once: the callback that takes it is the only one that can finish that link.
 *
 * The control store backs it ('oauth_state' resources, sealed: `connections/oauth-store.ts`).
 */
import type { OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/** The connection a credential belongs to. */
export interface ConnectionRef {
  readonly tenant: string;
  /** The connection's name (the PUT path id, §4.3). */
  readonly connection: string;
}

/** A client registration as the SDK hands it over (with `issuer`); JSON. */
export type StoredClient = OAuthClientInformationMixed;

/** A token set as the SDK hands it over (with `issuer`); JSON. */
export type StoredTokens = OAuthTokens;

/** An authorization under way: what the callback's `state` stands for (row 45). */
export interface PendingAuthorization extends ConnectionRef {
  /** The random single-use handle sent as `state` (32 bytes, base64url). */
  readonly state: string;
  /** The server being linked, so the callback finishes against the one that was started. */
  readonly endpoint: string;
  /** Where the browser goes once the link is finished (already allowlisted, row 44). */
  readonly returnTo: string;
  /** The PKCE S256 verifier of this authorization (RFC 7636). */
  readonly verifier: string;
  /** The client the authorization was started for; the code is only good for it. */
  readonly client: StoredClient;
  /** What discovery found (RFC 9728 / 8414), so the callback need not discover again. */
  readonly discovery: OAuthDiscoveryState | undefined;
  /** Unix ms after which the handle is refused. */
  readonly expires: number;
}

/** The credentials of one connection that can be forgotten. */
export type CredentialScope = 'client' | 'tokens' | 'all';

/** Storage of the OAuth flow. Every method may be called concurrently for different refs. */
export interface OAuthStateStore {
  loadClient(ref: ConnectionRef): Promise<StoredClient | undefined>;
  saveClient(ref: ConnectionRef, client: StoredClient): Promise<void>;
  loadTokens(ref: ConnectionRef): Promise<StoredTokens | undefined>;
  saveTokens(ref: ConnectionRef, tokens: StoredTokens): Promise<void>;
  /** Drops the client registration, the tokens or both (a server refused them). */
  forget(ref: ConnectionRef, scope: CredentialScope): Promise<void>;
  savePending(pending: PendingAuthorization): Promise<void>;
  /**
   * Removes the pending authorization named by `state` and answers it, or `undefined` when
   * there is none. Must be atomic: of two concurrent takes of one state, one gets it.
   * Expiry is the caller's check; an expired handle is still removed.
   */
  takePending(state: string): Promise<PendingAuthorization | undefined>;
}
