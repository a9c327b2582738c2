/**
 * A tenant's inference options (2.13, 2.16, 2.18, decisions rows 48 to 51, 56, 79). An
 * option is stored as the parsed body (defaults filled in) under its name, indexed by
 * the secret it names so `DELETE /secrets/{id}` can tell it is in use; installs index
 * the option they select, so deleting an option in use is refused.
 */
import canonicalize from 'canonicalize';
import { Conflict, InvalidRequest, NotFound } from '../errors.ts';
import { INDEX, scoped, type InferenceValue } from '../resources/types.ts';
import type { WriteOutcome } from '../schemas/common.ts';
import type { InferenceOption, InferenceRead } from '../schemas/inference.ts';
import type { ControlStore, Versioned } from '../storage/control-store.ts';

function read(option: Versioned<InferenceValue>): InferenceRead {
  return { ...option.value, name: option.id, created: option.created, updated: option.updated };
}

/**
 * 4.3 `PUT /inferences/{id}`: the credential must be a secret the tenant holds (400
 * naming `body.credential`); the same option again writes nothing (`unchanged`).
 */
export async function putInference(
  store: ControlStore,
  tenant: string,
  name: string,
  option: InferenceOption,
): Promise<WriteOutcome> {
  const credential = option.credential;
  if (credential !== null && (await store.get('secret', tenant, credential)) === null) {
    throw new InvalidRequest('unknown_secret', `the tenant holds no secret named ${credential}`, {
      field: 'body.credential',
      reason: 'names no secret the tenant holds',
    });
  }
  const current = await store.get('inference', tenant, name);
  if (current !== null && canonicalize(current.value) === canonicalize(option)) {
    return 'unchanged';
  }
  await store.write([
    {
      op: 'put',
      kind: 'inference',
      scope: tenant,
      id: name,
      value: option,
      expect: current?.version ?? 0,
      index: { [INDEX.secret]: credential === null ? [] : [scoped(tenant, credential)] },
    },
  ]);
  return current === null ? 'created' : 'replaced';
}

/** Row 79: one option by name; 404 when the tenant has none by that name. */
export async function getInference(
  store: ControlStore,
  tenant: string,
  name: string,
): Promise<InferenceRead> {
  const option = await store.get('inference', tenant, name);
  if (option === null) {
    throw new NotFound('inference_not_found', `the tenant has no inference option named ${name}`);
  }
  return read(option);
}

/** Row 79: every option of the tenant, by name. */
export async function listInferences(
  store: ControlStore,
  tenant: string,
): Promise<InferenceRead[]> {
  const options = await store.list('inference', tenant);
  return options.map(read);
}

/**
 * 4.3 `DELETE /inferences/{id}`: 404 when absent, 409 with the installs (2.18) while a
 * live install selects it. A deleted install runs nothing, so it does not hold the option.
 */
export async function deleteInference(
  store: ControlStore,
  tenant: string,
  name: string,
): Promise<void> {
  const option = await store.get('inference', tenant, name);
  if (option === null) {
    throw new NotFound('inference_not_found', `the tenant has no inference option named ${name}`);
  }
  const installs = (await store.findByIndex('install', INDEX.inference, scoped(tenant, name)))
    .filter((install) => install.scope === tenant && !install.value.deleted)
    .map((install) => install.id);
  if (installs.length > 0) {
    throw new Conflict(
      'inference_in_use',
      `inference option ${name} is still selected by installs ${installs.join(', ')}`,
      { extensions: { installs } },
    );
  }
  // No version check: a write that lands between the check and here is simply deleted
  // with it, as if it had come first.
  await store.write([{ op: 'delete', kind: 'inference', scope: tenant, id: name, expect: null }]);
}
