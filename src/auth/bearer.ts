/**
 * Reads the bearer credential of a request (RFC 6750 §2.1). A missing header answers null;
 * a header that is present but not a bearer credential is refused as `invalid_token`.
 */
import { Unauthenticated } from '../errors.ts';

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*)$/i;

/**
 * The last header read and its credential. A request's header is read more than once (by
 * its rate limit's bucket, then by its route), and a client sends the same one request
 * after request: the same credential is then answered as the same string, whose hash V8
 * has already computed, so the token caches' lookups (`token-cache.ts`) do not hash its
 * 500 bytes and more again, and the expression does not run again (together about 3 µs of
 * each one-record append in `npm run bench`). It holds one token text, as those caches
 * hold the last few hundred.
 */
let lastHeader: string | undefined;
let lastCredential = '';

/** The credential in an `Authorization` header, or null when none was sent. */
export function bearerOf(header: string | string[] | undefined): string | null {
  if (header === undefined || header === '') return null;
  const value = Array.isArray(header) ? header[0] : header;
  if (value !== undefined && value === lastHeader) return lastCredential;
  const match = value === undefined ? null : BEARER.exec(value.trim());
  const credential = match?.[1];
  if (credential === undefined) {
    throw new Unauthenticated('the Authorization header is not a Bearer credential', true);
  }
  lastHeader = value;
  lastCredential = credential;
  return credential;
}

/** Like `bearerOf`, but a missing credential is a 401 too. */
export function requireBearer(header: string | string[] | undefined): string {
  const credential = bearerOf(header);
  if (credential === null) throw new Unauthenticated('a Bearer credential is required', false);
  return credential;
}
