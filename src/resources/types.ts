/**
 * What the control store keeps for each resource kind: the stored values and the index
 * names other parts look them up by. One place, so every route and actor reads and writes
 * the same shapes (src/storage/control-store.ts holds them as versioned JSON documents).
 *
 * Scopes: a tenant's resources are scoped by the tenant id; tenants and installs' key
 * lookups stand alone (scope `''`). Index values that name a tenant's resource are written
 * `<tenant>/<name>` so a lookup never crosses tenants.
 */
import type { Catalog, ConnectionAuth, ConnectionState } from '../schemas/connections.ts';
import type { InferenceOption } from '../schemas/inference.ts';
import type { TenantConfig } from '../schemas/tenant.ts';
import type { VendorDocument } from '../schemas/vendor.ts';

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
