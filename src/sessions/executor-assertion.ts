/**
 * The executor's token request (decisions row 65, RFC 7523 style): a JWT the executor
 * signs with the key it registered at session open (row 62), exchanged at
 * `GET /sessions/{id}/executor/token` for a session token scoped to read and claim.
 *
 * The assertion must name the executor as `iss`, this endpoint's absolute URL under
 * `BASE_URL` as `aud`, carry an `exp` at most five minutes ahead and a `jti` never used
 * before (recorded until the assertion expires, across processes, by `once`). A foreign
 * key, a wrong audience, an expired or far-future assertion and a replay are all 401.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import { Unauthenticated } from '../errors.ts';
import type { ExecutorSpec } from '../schemas/executor.ts';

/** Row 65: how far ahead an assertion may expire. */
export const MAX_ASSERTION_LIFETIME_MS = 5 * 60_000;
/** Clock skew tolerated on `exp` and `iat`. */
const SKEW_S = 30;

export interface AssertionCheck {
  readonly executor: ExecutorSpec;
  /** This endpoint's absolute URL: the only `aud` accepted. */
  readonly audience: string;
  readonly now: number;
  /** Records `jti` until `until` (ms); false when it was recorded already (a replay). */
  once(jti: string, until: number): Promise<boolean>;
}

/** The registered key and the one algorithm it signs with. */
function keyOf(spec: ExecutorSpec): { readonly key: KeyObject; readonly alg: 'EdDSA' | 'ES256' } {
  const key =
    typeof spec.public_key === 'string'
      ? createPublicKey(spec.public_key)
      : createPublicKey({ key: spec.public_key, format: 'jwk' });
  if (key.asymmetricKeyType === 'ed25519') return { key, alg: 'EdDSA' };
  if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') {
    return { key, alg: 'ES256' };
  }
  throw new Error('the registered executor key is neither Ed25519 nor P-256');
}

const refuse = (reason: string, cause?: unknown): Unauthenticated =>
  new Unauthenticated(reason, true, cause === undefined ? {} : { cause });

/**
 * Verifies the executor's assertion; answers when it expires (ms).
 * @throws Unauthenticated naming why it is refused.
 */
export async function verifyAssertion(jwt: string, check: AssertionCheck): Promise<number> {
  let header;
  try {
    header = decodeProtectedHeader(jwt);
  } catch (error) {
    throw refuse('the assertion is not a compact JWS', error);
  }
  const { key, alg } = keyOf(check.executor);
  if (header.alg !== alg)
    throw refuse(`the assertion must be signed ${alg} with the registered key`);
  let payload;
  try {
    ({ payload } = await jwtVerify(jwt, key, {
      algorithms: [alg],
      issuer: check.executor.name,
      audience: check.audience,
      currentDate: new Date(check.now),
      clockTolerance: SKEW_S,
      requiredClaims: ['exp', 'jti'],
    }));
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw refuse('the assertion has expired', error);
    if (error instanceof joseErrors.JWTClaimValidationFailed) {
      throw refuse(`the assertion's ${error.claim} is not accepted here`, error);
    }
    throw refuse('the assertion does not verify with the registered executor key', error);
  }
  const expires = (payload.exp ?? 0) * 1000;
  if (expires > check.now + MAX_ASSERTION_LIFETIME_MS + SKEW_S * 1000) {
    throw refuse('the assertion must expire within 5 minutes');
  }
  const jti = payload.jti ?? '';
  if (jti === '' || jti.length > 256)
    throw refuse('the assertion needs a jti of 1 to 256 characters');
  if (!(await check.once(jti, expires))) throw refuse('the assertion was used before (jti replay)');
  return expires;
}
