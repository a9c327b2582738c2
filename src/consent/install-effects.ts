/**
 * The install effects of a consent (interface table 3.2 row 2, decisions rows 28 and 94),
 * provided to the proposal actor (`src/actors/proposal.actor.ts`).
 *
 * The host runs an effect before it commits the proposal's transition and runs it again
 * when the commit loses a race, so both are idempotent: the id of a new install is minted
 * with the proposal (one id, whichever consent runs first), an install this request already
 * created is success, and an update writes the same values again. Each effect writes the
 * install and the proposal's tenant binding in one batch, under the proposal's version, so
 * two consents racing in two processes cannot both bind it.
 */
import type { ProposalEffects } from '../actors/proposal.actor.ts';
import { Conflict, NotFound } from '../errors.ts';
import type { InstallEffect } from '../machines/proposal.machine.ts';
import type { InstallValue, ProposalValue } from '../resources/types.ts';
import type { ControlStore, ControlWrite, Versioned } from '../storage/control-store.ts';
import type { TenantConfig } from '../schemas/tenant.ts';
import { installIndex } from './documents.ts';

async function proposalOf(store: ControlStore, request: string): Promise<Versioned<ProposalValue>> {
  const proposal = await store.get('proposal', '', request);
  if (proposal === null) throw new NotFound('no_such_request', 'no proposal by that request');
  return proposal;
}

/** The proposal bound to the consenting tenant, as part of the install's batch. */
function bind(proposal: Versioned<ProposalValue>, tenant: string): ControlWrite {
  return {
    op: 'put',
    kind: 'proposal',
    scope: '',
    id: proposal.id,
    value: { ...proposal.value, tenant } satisfies ProposalValue,
    expect: proposal.version,
  };
}

/** Creates the install and its key (3.2 row 2); the key is the hash minted with the proposal. */
async function createInstall(store: ControlStore, params: InstallEffect): Promise<void> {
  const existing = await store.get('install', params.tenant, params.install);
  if (existing !== null) {
    if (existing.value.request === params.request) return;
    throw new Conflict('install_exists', 'another install holds this id');
  }
  const proposal = await proposalOf(store, params.request);
  const value: InstallValue = {
    id: params.install,
    tenant: params.tenant,
    vendor: proposal.value.vendor,
    vendorHash: proposal.value.vendorHash,
    // The edge checked it against TenantConfig before it reached the machine.
    config: params.config as TenantConfig,
    deleted: false,
    keyHash: params.key,
    request: params.request,
  };
  await store.write([
    {
      op: 'put',
      kind: 'install',
      scope: params.tenant,
      id: params.install,
      value,
      expect: 0,
      index: installIndex(value),
    },
    bind(proposal, params.tenant),
  ]);
}

/** Row 94: the vendor document and the consent are replaced; the install and key are kept. */
async function updateInstall(store: ControlStore, params: InstallEffect): Promise<void> {
  const current = await store.get('install', params.tenant, params.install);
  if (current === null || current.value.deleted) {
    throw new NotFound('install_gone', 'the install this proposal updates is gone');
  }
  const proposal = await proposalOf(store, params.request);
  const value: InstallValue = {
    ...current.value,
    vendor: proposal.value.vendor,
    vendorHash: proposal.value.vendorHash,
    config: params.config as TenantConfig,
  };
  await store.write([
    {
      op: 'put',
      kind: 'install',
      scope: params.tenant,
      id: params.install,
      value,
      expect: current.version,
      index: installIndex(value),
    },
    bind(proposal, params.tenant),
  ]);
}

/** The real install effects over `store`. */
export function installEffects(store: ControlStore): ProposalEffects {
  return {
    createInstall: (params) => createInstall(store, params),
    updateInstall: (params) => updateInstall(store, params),
  };
}
