/**
 * A tenant's secrets (2.14, 2.18, decisions rows 55 and 59). Values go to the control
 * store sealed (`putSecretValue`) and never come back out through here: the list answers
 * names and times only, and nothing in this module logs.
 */
import { Conflict, NotFound } from '../errors.ts';
import { INDEX, scoped } from '../resources/types.ts';
import type { SecretList } from '../schemas/console.ts';
import type { WriteOutcome } from '../schemas/common.ts';
import type { ControlStore } from '../storage/control-store.ts';

/**
 * Row 55: stores the value; `unchanged` when its HMAC matches the held one. A secret
 * that existed before is `replaced`, else `created`.
 */
export async function putSecret(
  store: ControlStore,
  tenant: string,
  name: string,
  value: string,
): Promise<WriteOutcome> {
  const before = await store.get('secret', tenant, name);
  const { changed } = await store.putSecretValue(tenant, name, value);
  if (!changed) return 'unchanged';
  return before === null ? 'created' : 'replaced';
}

/** Row 55: the tenant's secrets by name, without values. */
export async function listSecrets(store: ControlStore, tenant: string): Promise<SecretList> {
  const secrets = await store.list('secret', tenant);
  return secrets.map((secret) => ({
    name: secret.id,
    created: secret.created,
    updated: secret.updated,
  }));
}

/** The names of a tenant's resources of `kind` whose `secret` index names the secret. */
async function referencing(
  store: ControlStore,
  kind: 'inference' | 'connection',
  tenant: string,
  name: string,
): Promise<string[]> {
  const found = await store.findByIndex(kind, INDEX.secret, scoped(tenant, name));
  // The index value already names the tenant; the scope check keeps that a promise.
  return found.filter((resource) => resource.scope === tenant).map((resource) => resource.id);
}

/**
 * 4.3 `DELETE /secrets/{id}`: 404 when the tenant holds no such secret, 409 with the 2.18
 * lists while inference options or connections name it. Nothing is cascaded.
 */
export async function deleteSecret(
  store: ControlStore,
  tenant: string,
  name: string,
): Promise<void> {
  const secret = await store.get('secret', tenant, name);
  if (secret === null) {
    throw new NotFound('secret_not_found', `the tenant holds no secret named ${name}`);
  }
  const [inferences, connections] = await Promise.all([
    referencing(store, 'inference', tenant, name),
    referencing(store, 'connection', tenant, name),
  ]);
  if (inferences.length > 0 || connections.length > 0) {
    const message = `secret ${name} is still named by ${[
      ...inferences.map((option) => `inference option ${option}`),
      ...connections.map((connection) => `connection ${connection}`),
    ].join(', ')}`;
    // Row 59: the 2.18 members ride on the problem as extensions.
    throw new Conflict('secret_in_use', message, { extensions: { connections, inferences } });
  }
  // No version check: a write that lands between the check and here is simply deleted
  // with it, as if it had come first.
  await store.write([{ op: 'delete', kind: 'secret', scope: tenant, id: name, expect: null }]);
}
