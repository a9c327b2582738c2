/**
 * The install audience (interface 5 rule 1, §7): an install key `ik_…` names one install,
 * found by the SHA-256 of the key. No key, or one no install answers, is 401; the key of
 * a deleted install reads as gone (404, decisions row 76).
 */
import type { FastifyRequest } from 'fastify';
import { requireBearer } from '../../auth/bearer.ts';
import { credentialLookup } from '../../auth/opaque.ts';
import { Forbidden, NotFound, Unauthenticated } from '../../errors.ts';
import type { ControlStore, Versioned } from '../../storage/control-store.ts';
import { INDEX, type InstallValue } from '../../resources/types.ts';

/** The install a request's key names, with its stored version. */
export async function installCaller(
  request: FastifyRequest,
  controlStore: ControlStore,
): Promise<Versioned<InstallValue>> {
  const hash = credentialLookup(requireBearer(request.headers.authorization), 'ik');
  if (hash === null)
    throw new Unauthenticated('the install key is not one this service issued', true);
  const [install] = await controlStore.findByIndex('install', INDEX.key, hash);
  if (install === undefined) throw new Unauthenticated('no install answers this key', true);
  if (install.value.deleted)
    throw new NotFound('install_gone', 'the install this key names is gone');
  return install;
}

/** Rule 1: an endpoint that takes an install id requires that the key names it. */
export function requireInstallId(install: Versioned<InstallValue>, id: string): void {
  if (install.id !== id)
    throw new Forbidden('wrong_install', 'the install key does not name this install');
}
