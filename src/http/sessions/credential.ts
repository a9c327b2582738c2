/**
 * The session-token audience (interface 5 rule 2, §7; decisions rows 7 and 69): the token
 * in `Authorization: Bearer` must verify (else 401), then attach to the session the path
 * names (else 403 `does_not_attach`). A path id that is not a session id never attaches:
 * on session-token paths it is a 403, never a 400 or 404 (row 7).
 *
 * Shared by every route that takes a session token (append, status, and the tails).
 */
import type { FastifyRequest } from 'fastify';
import { requireBearer } from '../../auth/bearer.ts';
import { Forbidden } from '../../errors.ts';
import { parseStreamId } from '../../schemas/common.ts';
import type { SessionCredential, SessionTokens } from '../../sessions/tokens.ts';

/** The verified session token of a request (or grant, with `grants`). */
export function sessionCredential(
  request: FastifyRequest,
  tokens: SessionTokens,
  options: { grants?: boolean } = {},
): Promise<SessionCredential> {
  return tokens.verify(requireBearer(request.headers.authorization), options);
}

/**
 * The canonical id of the session the path names, when the credential attaches to it.
 * @throws Forbidden `does_not_attach` otherwise (rows 7, 83: after 401, before 404).
 */
export function requireAttached(credential: SessionCredential, pathId: string): string {
  const id = parseStreamId(pathId);
  if (id === null || id !== credential.session) {
    throw new Forbidden('does_not_attach', 'the token does not attach to this session');
  }
  return id;
}

/** Row 69: a token that cannot read every public record (a grant) is refused with 403. */
export function requireReader(credential: SessionCredential): void {
  if (credential.audience !== 'session' || !credential.scopes.has('read')) {
    throw new Forbidden(
      'insufficient_scope',
      'the token does not read every public session record',
      { headers: { 'www-authenticate': 'Bearer error="insufficient_scope", scope="read"' } },
    );
  }
}
