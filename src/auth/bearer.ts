/**
 * Reads the bearer credential of a request (RFC 6750 §2.1). A missing header answers null;
 * a header that is present but not a bearer credential is refused as `invalid_token`.
 */
import { Unauthenticated } from '../errors.ts';

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/** The credential in an `Authorization` header, or null when none was sent. */
export function bearerOf(header: string | string[] | undefined): string | null {
  if (header === undefined || header === '') return null;
  const value = Array.isArray(header) ? header[0] : header;
  const match = value === undefined ? null : BEARER.exec(value.trim());
  if (match?.[1] === undefined) {
    throw new Unauthenticated('the Authorization header is not a Bearer credential', true);
  }
  return match[1];
}

/** Like `bearerOf`, but a missing credential is a 401 too. */
export function requireBearer(header: string | string[] | undefined): string {
  const credential = bearerOf(header);
  if (credential === null) throw new Unauthenticated('a Bearer credential is required', false);
  return credential;
}
