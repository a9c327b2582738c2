/**
 * Which caller may name which session (interface 5 rule 3, 4.1, 4.4; decisions rows 4 to
 * 7, 60, 64, 75). On install paths the id's owner digest must verify against the caller's
 * install; on console paths the session must belong to the caller's tenant. Anything
 * else, a malformed id included, reads as no such session (404): an install or a tenant
 * learns nothing about sessions that are not its own.
 */
import { NotFound } from '../errors.ts';
import type { SessionValue } from '../resources/types.ts';
import { parseStreamId } from '../schemas/common.ts';
import type { SessionDirectory } from './directory.ts';
import { ownsSessionId } from './ids.ts';

function noSuchSession(): NotFound {
  return new NotFound('session_not_found', 'no such session under this caller');
}

/**
 * The session `pathId` names when `install` owns it (rows 5, 60).
 * @throws NotFound `session_not_found` for a malformed, unknown or foreign id.
 */
export async function sessionOfInstall(
  directory: SessionDirectory,
  idKey: Buffer,
  install: string,
  pathId: string,
): Promise<SessionValue> {
  const id = parseStreamId(pathId);
  if (id === null) throw noSuchSession();
  const session = await directory.get(id);
  if (
    session?.value.install !== install ||
    !ownsSessionId(idKey, id, install, session.value.nonce)
  ) {
    throw noSuchSession();
  }
  return session.value;
}

/**
 * The session `pathId` names when it belongs to `tenant` (row 7: console paths 404).
 * @throws NotFound `session_not_found` for a malformed, unknown or foreign id.
 */
export async function sessionOfTenant(
  directory: SessionDirectory,
  tenant: string,
  pathId: string,
): Promise<SessionValue> {
  const id = parseStreamId(pathId);
  const session = id === null ? null : await directory.get(id);
  if (session?.value.tenant !== tenant) throw noSuchSession();
  return session.value;
}
