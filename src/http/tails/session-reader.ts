/**
 * Who reads a session tail (interface 4.2, 5; decisions rows 3, 7, 66): the session token,
 * wherever the transport lets it travel, checked to attach to the session in the path,
 * and the face of the log it reads.
 *
 * Over plain HTTP the token travels in `Authorization: Bearer`. A WebSocket upgrade from a
 * browser cannot set that header, so there it may also come as the `access_token` query
 * parameter or as `Sec-WebSocket-Protocol: bearer, <token>` (row 3); the socket then
 * answers the `bearer` subprotocol (the ws server picks the first one offered).
 */
import type { FastifyRequest } from 'fastify';
import { bearerOf } from '../../auth/bearer.ts';
import { Forbidden, Unauthenticated } from '../../errors.ts';
import { parseStreamId } from '../../schemas/common.ts';
import { faceFor, type Face } from '../../sessions/faces.ts';
import { tenantSealKey } from '../../sessions/sealing.ts';
import type { SessionCredential, SessionTokens } from '../../sessions/tokens.ts';

/** The scope a token needs to read a session's records. */
const READ_SCOPE = 'read';

/** A verified reader of one session's tail. */
export interface TailReader {
  /** The session (canonical lowercase id). */
  readonly session: string;
  /** The producer the token writes as: decides the face (row 66). */
  readonly producer: string;
  readonly face: Face;
  /** When the token expires, in ms: the tail ends there (row 68). */
  readonly expires: number;
  /** The token, as the tail caps count it (`TailSlots`): each minted token on its own. */
  readonly credential: string;
  /** The verified token, checked again while the tail is open (`StandingWatch`). */
  readonly verified: SessionCredential;
}

export interface SessionReaderDeps {
  readonly sessionTokens: SessionTokens;
  /** The root key tenant sealing keys derive from (`tenantSealKey`). */
  readonly sealKey: Buffer;
}

/** The token of `Sec-WebSocket-Protocol: bearer, <token>`, or null. */
export function subprotocolToken(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header.join(',') : header;
  if (value === undefined) return null;
  const [scheme, token, ...rest] = value.split(',').map((part) => part.trim());
  if (scheme?.toLowerCase() !== 'bearer' || token === undefined || token === '') return null;
  return rest.length === 0 ? token : null;
}

/** The session token a request carries, by the ways its transport allows (row 3). */
function presentedToken(request: FastifyRequest, accessToken: string | undefined): string | null {
  const header = bearerOf(request.headers.authorization);
  if (header !== null || !request.ws) return header;
  return (
    subprotocolToken(request.headers['sec-websocket-protocol']) ??
    (accessToken === undefined || accessToken === '' ? null : accessToken)
  );
}

/**
 * Verifies the session token of a tail request for the session `id` names. No token or
 * one that does not verify: 401. A token for another session, or an id that names no
 * session at all: 403 `does_not_attach` (row 7). A token without the read scope: 403.
 */
export async function sessionReader(
  request: FastifyRequest,
  id: string,
  accessToken: string | undefined,
  deps: SessionReaderDeps,
): Promise<TailReader> {
  const token = presentedToken(request, accessToken);
  if (token === null) throw new Unauthenticated('a session token is required', false);
  const credential = await deps.sessionTokens.verify(token);
  const session = parseStreamId(id);
  if (session === null || credential.session !== session) {
    throw new Forbidden('does_not_attach', 'the token does not attach to this session');
  }
  if (!credential.scopes.has(READ_SCOPE)) {
    throw new Forbidden('insufficient_scope', 'the token may not read this session');
  }
  const key =
    credential.tenant === null || credential.tenant === ''
      ? null
      : tenantSealKey(deps.sealKey, credential.tenant);
  return {
    // The token's copy of the id, equal to the path's: the token caches hold it already,
    // and the tail's own structures (its feed, the wake-ups) then share it.
    session: credential.session,
    producer: credential.producer,
    face: faceFor(credential.producer, key),
    expires: credential.expires,
    // The idempotency key is fresh for every minted token (row 9).
    credential: `${session}:${credential.producer}:${credential.key}`,
    verified: credential,
  };
}
