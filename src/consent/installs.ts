/**
 * A tenant's installs as the console manages them (interface 3.5, 4.3, 4.4; decisions rows
 * 28, 39, 76 and 77): reading, replacing the consent, deleting (a tombstone) and the key.
 *
 * Every write names the version it read, so two owners acting at once never lose one's
 * change silently: the later one answers 409 `version_conflict` and can read again.
 */
import type { Entropy } from '../clock.ts';
import { issueCredential } from '../auth/opaque.ts';
import { NotFound } from '../errors.ts';
import type { InstallValue } from '../resources/types.ts';
import type { ControlStore, Versioned } from '../storage/control-store.ts';
import type { TenantConfig } from '../schemas/tenant.ts';
import type { ComposedDocument } from '../schemas/vendor.ts';
import { composedDocument, installIndex } from './documents.ts';
import { requireConfig } from './surface.ts';

/** What else happens when an install is deleted. */
export interface InstallHooks {
  /**
   * Runs after the tombstone is written, and again on every repeated delete, so it must
   * be idempotent. The service's hook archives every session of the install
   * (decisions rows 60, 61, 76: `session.archived` by `install_deleted`).
   */
  deleted(install: Versioned<InstallValue>): Promise<void>;
  /**
   * Runs once the install's key was rotated or revoked (row 77), so that the session
   * tokens minted under the old key stop at once in this process.
   */
  keyChanged(install: string): void;
}

/** One page of `GET /installs` (row 39: `next` is passed back as `after`). */
export interface InstallPage {
  readonly items: ComposedDocument[];
  readonly next: string | null;
}

/** The tenant's install by id, live: 404 when the tenant has none, or it was deleted. */
export async function liveInstall(
  store: ControlStore,
  tenant: string,
  id: string,
): Promise<Versioned<InstallValue>> {
  const install = await store.get('install', tenant, id);
  if (install === null) throw new NotFound('no_such_install', 'the tenant has no such install');
  if (install.value.deleted) throw new NotFound('install_gone', 'the install was deleted');
  return install;
}

/** Row 76: live installs by ascending id, `limit` per page. */
export async function listInstalls(
  store: ControlStore,
  tenant: string,
  after: string | undefined,
  limit: number,
): Promise<InstallPage> {
  const live: Versioned<InstallValue>[] = [];
  let cursor = after;
  // Tombstones are skipped, so a page may take more than one read.
  while (live.length <= limit) {
    const batch = await store.list('install', tenant, {
      ...(cursor === undefined ? {} : { after: cursor }),
      limit: limit + 1,
    });
    live.push(...batch.filter((install) => !install.value.deleted));
    const last = batch.at(-1);
    if (batch.length <= limit || last === undefined) break;
    cursor = last.id;
  }
  const page = live.slice(0, limit);
  return {
    items: page.map(composedDocument),
    next: live.length > limit ? (page.at(-1)?.id ?? null) : null,
  };
}

async function rewrite(
  store: ControlStore,
  install: Versioned<InstallValue>,
  value: InstallValue,
): Promise<Versioned<InstallValue>> {
  const [written] = await store.write([
    {
      op: 'put',
      kind: 'install',
      scope: install.scope,
      id: install.id,
      value,
      expect: install.version,
      index: installIndex(value),
    },
  ]);
  if (written === undefined) throw new Error('the install write answered nothing');
  return written as Versioned<InstallValue>;
}

/**
 * 3.5, 4.3 `PUT /installs/{id}`: replaces the consent; the vendor config is unchanged.
 * Sessions opened afterward use it; open ones keep the config they landed at open.
 */
export async function replaceConsent(
  store: ControlStore,
  tenant: string,
  id: string,
  config: TenantConfig,
): Promise<ComposedDocument> {
  const install = await liveInstall(store, tenant, id);
  await requireConfig(store, tenant, install.value.vendor, config);
  return composedDocument(await rewrite(store, install, { ...install.value, config }));
}

/**
 * Row 76: tombstones the install. Its key stays on the index so it answers 404 gone (§7),
 * its references to options and connections go, and then the hooks run. A repeated delete
 * answers 404 gone but runs the hooks again, so a delete whose hooks failed half way is
 * finished by trying again.
 */
export async function deleteInstall(
  store: ControlStore,
  tenant: string,
  id: string,
  hooks: InstallHooks,
): Promise<void> {
  const install = await store.get('install', tenant, id);
  if (install === null) throw new NotFound('no_such_install', 'the tenant has no such install');
  const tombstone = install.value.deleted
    ? install
    : await rewrite(store, install, { ...install.value, deleted: true });
  await hooks.deleted(tombstone);
  if (install.value.deleted) throw new NotFound('install_gone', 'the install was deleted');
}

/** Row 77: a new key, answered once; the old one stops answering at once. */
export async function rotateKey(
  store: ControlStore,
  entropy: Entropy,
  tenant: string,
  id: string,
): Promise<string> {
  const install = await liveInstall(store, tenant, id);
  const key = issueCredential('ik', entropy);
  await rewrite(store, install, { ...install.value, keyHash: key.hash });
  return key.value;
}

/** Row 77: no key answers for the install until one is rotated in. */
export async function revokeKey(store: ControlStore, tenant: string, id: string): Promise<void> {
  const install = await liveInstall(store, tenant, id);
  await rewrite(store, install, { ...install.value, keyHash: null });
}
