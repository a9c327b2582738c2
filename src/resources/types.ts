/**
 * What the control store keeps for each resource kind: the registry of kinds and their
 * stored values (`ResourceValues`), and the index names other parts look them up by. One
 * place, so every route and actor reads and writes the same shapes: the control store's
 * port (src/storage/control-store.ts) takes its kinds from here and answers each read
 * with the value its kind registers, so no caller names a value type by hand.
 *
 * Scopes: a tenant's resources are scoped by the tenant id; tenants and installs' key
 * lookups stand alone (scope `''`). Index values that name a tenant's resource are written
 * `<tenant>/<name>` so a lookup never crosses tenants.
 */
import type { Catalog, ConnectionAuth, ConnectionState } from '../schemas/connections.ts';
import type { InferenceOption } from '../schemas/inference.ts';
import type { TenantConfig } from '../schemas/tenant.ts';
import type { ComposedDocument, VendorDocument } from '../schemas/vendor.ts';

/** Console roles (decisions row 74). */
export type Role = 'owner' | 'member';

/** kind `tenant`, scope `''`, id = tenant id. */
export interface TenantValue {
  readonly name: string;
}

/** kind `membership`, scope = tenant id, id = user; index `user` → [user]. */
export interface MembershipValue {
  readonly user: string;
  readonly role: Role;
}

/** kind `inference`, scope = tenant id, id = option name; index `secret` → [`<tenant>/<secret>`]. */
export type InferenceValue = InferenceOption;

/**
 * kind `connection`, scope = tenant id, id = connection name;
 * index `secret` → [`<tenant>/<secret>`] when it names a credential.
 */
export interface ConnectionValue {
  readonly name: string;
  readonly endpoint: string;
  readonly auth: ConnectionAuth;
  readonly catalog: Catalog | null;
  readonly state: ConnectionState;
  readonly result_limit: number | null;
  readonly timeout: string | null;
  /** Where the owner's browser goes after authorization (decisions row 44). */
  readonly return_to: string | null;
  /** The URL the owner opens while `authorizing`. */
  readonly authorize: string | null;
}

/**
 * kind `install`, scope = tenant id, id = install id. Indexes: `key` → [SHA-256 of the
 * current install key] (empty once revoked), `inference` → [`<tenant>/<option>`],
 * `connection` → [`<tenant>/<connection>` for each extra tool's connection].
 */
export interface InstallValue {
  readonly id: string;
  readonly tenant: string;
  readonly vendor: VendorDocument;
  /** SHA-256 of the RFC 8785 form of the vendor document (decisions row 21). */
  readonly vendorHash: string;
  readonly config: TenantConfig;
  /** Tombstoned by DELETE /installs/{id}: the key stops answering, reads say gone. */
  readonly deleted: boolean;
  /**
   * SHA-256 of the current install key, null once revoked: the `key` index mirrors it, and
   * a write that replaces the indexes (a new consent) keeps the key from here.
   */
  readonly keyHash: string | null;
  /** The proposal whose consent created the install (its effects are idempotent by it). */
  readonly request: string;
}

/**
 * kind `proposal`, scope `''`, id = request id (2.8, table 3.2): what the proposal machine
 * does not keep. The machine's persisted snapshot (actor type `proposal`, same id) holds
 * the state, the poll secret's hash, the interval and the receipt.
 */
export interface ProposalValue {
  readonly request: string;
  /** The vendor document as checked and normalized (row 20). */
  readonly vendor: VendorDocument;
  /** SHA-256 of its RFC 8785 form (row 21). */
  readonly vendorHash: string;
  /** The install an update replaces, or the id minted for the install consent will create. */
  readonly install: string;
  /** True for POST /installs/{id}/proposals (row 94: install and key kept). */
  readonly update: boolean;
  /** The tenant the proposal is bound to: the updated install's, or the consenting one's. */
  readonly tenant: string | null;
  /**
   * A new app's install key is derived from the poll secret and this random salt, never
   * stored (`src/consent/install-key.ts`); null for updates and once the proposal lapsed.
   */
  readonly salt: string | null;
  /** SHA-256 of that derived key: what the install's `key` index will hold; null for updates. */
  readonly keyHash: string | null;
}

/** Index names, so a typo is a type error. */
export const INDEX = {
  user: 'user',
  secret: 'secret',
  key: 'key',
  inference: 'inference',
  connection: 'connection',
  request: 'request',
} as const;

/** `<tenant>/<name>`: an index value naming a tenant's resource. */
export function scoped(tenant: string, name: string): string {
  return `${tenant}/${name}`;
}

/**
 * kind `session`, scope `''`, id = session id (2.1): what the session routes look a
 * session up by. `nonce` is what the id's owner digest is made over (decisions row 5).
 */
export interface SessionValue {
  readonly id: string;
  readonly install: string;
  readonly tenant: string;
  readonly nonce: string;
  /** SHA-256(install ‖ principal), decisions row 38; null once erased. */
  readonly subject: string | null;
  /** Unix ms of the open (2.11 `opened`). */
  readonly opened: number;
  /** Hash of the composed document pinned at open (§3.5); its `session_config` id. */
  readonly config: string;
  readonly archived: boolean;
  /** Unix ms of `session.archived`, once archived. */
  readonly archivedAt: number | null;
}

/**
 * kind `session_row`: one directory row (2.11, decisions rows 37 to 40, 75), filed under
 * each listing it appears in (scopes `install:<install>`, `subject:<install>:<subject>`,
 * `tenant:<tenant>`); id = a sort key that lists newest first (`src/sessions/directory.ts`).
 */
export interface SessionRowValue {
  readonly id: string;
  readonly install: string;
  readonly opened: number;
  readonly subject: string | null;
  readonly archived: boolean;
}

/**
 * kind `session_config`, scope = tenant id, id = its hash: a composed document (2.7) a
 * session pinned at open (§3.5), kept once however many sessions pin it.
 */
export type SessionConfigValue = ComposedDocument;

/** kind `secret`, scope = tenant id, id = its name: the value itself is sealed by the store. */
export interface SecretValue {
  readonly name: string;
}

/**
 * kind `oauth_state` (`src/connections/oauth-store.ts`): a connection's OAuth client or
 * token set, scope = tenant id, sealed; or, in scope `''`, a pending authorization, which
 * keeps in the clear what its lookups need.
 */
export interface SealedOAuthState {
  readonly sealed: string;
}

/** A pending authorization as stored (kind `oauth_state`, scope `''`). */
export interface SealedPendingAuthorization extends SealedOAuthState {
  readonly tenant: string;
  readonly connection: string;
  readonly expires: number;
}

/** The registry: every resource kind the control store keeps, and the value it holds. */
export interface ResourceValues {
  readonly tenant: TenantValue;
  readonly membership: MembershipValue;
  readonly install: InstallValue;
  readonly proposal: ProposalValue;
  readonly connection: ConnectionValue;
  readonly inference: InferenceValue;
  readonly secret: SecretValue;
  readonly oauth_state: SealedOAuthState | SealedPendingAuthorization;
  readonly session: SessionValue;
  readonly session_row: SessionRowValue;
  readonly session_config: SessionConfigValue;
}

/** The kinds of resource the control store keeps. */
export type ResourceKind = keyof ResourceValues;
