/**
 * Tokens the service mints and verifies (decisions rows 31 to 33): compact JWS signed with
 * the service's EdDSA key. Three audiences: `session` (a session holder or executor),
 * `grant` (an executor's grant for one call) and `console` (a tenant console user).
 * JWT `exp` stays in seconds (RFC 7519); the API's `expires` is `exp × 1000` ms.
 */
import { randomUUID } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import type { Clock } from '../clock.ts';
import { Unauthenticated } from '../errors.ts';
import { SIGNING_ALG, type SigningKey } from './key-material.ts';

export type Audience = 'session' | 'grant' | 'console';

/** The claims of a service token beside the registered ones. */
export interface TokenClaims {
  /** The producer the holder writes as (`principal:<n>`, `console:<u>`, `executor:<n>`). */
  readonly sub: string;
  /** The session the token attaches to (session, grant). */
  readonly sid?: string;
  /** The token's idempotency key (decisions row 9). */
  readonly idk?: string;
  /** Scopes (`read`, `append`, `claim`, `complete`). */
  readonly scp?: readonly string[];
  /** The tenant of a console token, or of the session. */
  readonly tid?: string;
  /** Further claims a later audience needs (grant cause, role). */
  readonly ext?: Readonly<Record<string, string | number | boolean>>;
}

export interface VerifiedToken extends TokenClaims {
  readonly aud: Audience;
  readonly jti: string;
  /** Expiry in ms. */
  readonly expires: number;
  /** When it was minted, in ms (`iat × 1000`). */
  readonly issuedAt: number;
}

export interface MintedToken {
  readonly token: string;
  /** Expiry in ms (API unit). */
  readonly expires: number;
  readonly jti: string;
}

/** Mints and verifies the service's tokens. */
export class TokenService {
  readonly #key: SigningKey;
  readonly #issuer: string;
  readonly #clock: Clock;

  constructor(key: SigningKey, issuer: string, clock: Clock) {
    this.#key = key;
    this.#issuer = issuer;
    this.#clock = clock;
  }

  /**
   * The key tokens are signed with. Gates (`src/gate/gate.ts`) are signed with it too,
   * under the same `kid`, and GET /.well-known/jwks.json publishes its public half.
   */
  get signingKey(): SigningKey {
    return this.#key;
  }

  /** Mints a token for `aud` that lives `ttlMs` from now. */
  async mint(aud: Audience, claims: TokenClaims, ttlMs: number): Promise<MintedToken> {
    const now = this.#clock.now();
    const exp = Math.floor((now + ttlMs) / 1000);
    const jti = randomUUID();
    const { sub, ...rest } = claims;
    const token = await new SignJWT({ ...rest })
      .setProtectedHeader({ alg: SIGNING_ALG, kid: this.#key.kid, typ: 'JWT' })
      .setIssuer(this.#issuer)
      .setAudience(aud)
      .setSubject(sub)
      .setIssuedAt(Math.floor(now / 1000))
      .setExpirationTime(exp)
      .setJti(jti)
      .sign(this.#key.privateKey);
    return { token, expires: exp * 1000, jti };
  }

  /**
   * Verifies a token for one audience. Any failure, a wrong audience included, is a 401
   * `invalid_token` that never says more than why (RFC 6750 §3.1).
   */
  async verify(token: string, aud: Audience): Promise<VerifiedToken> {
    try {
      const { payload } = await jwtVerify(token, this.#key.publicKey, {
        issuer: this.#issuer,
        audience: aud,
        algorithms: [SIGNING_ALG],
        currentDate: new Date(this.#clock.now()),
      });
      if (typeof payload.sub !== 'string' || typeof payload.jti !== 'string') {
        throw new Unauthenticated('the token lacks its subject', true);
      }
      return {
        ...(payload as unknown as TokenClaims),
        sub: payload.sub,
        aud,
        jti: payload.jti,
        expires: (payload.exp ?? 0) * 1000,
        issuedAt: (payload.iat ?? 0) * 1000,
      };
    } catch (error) {
      if (error instanceof Unauthenticated) throw error;
      const reason =
        error instanceof joseErrors.JWTExpired
          ? 'the token has expired'
          : error instanceof joseErrors.JWTClaimValidationFailed && error.claim === 'aud'
            ? `the token is not for the ${aud} audience`
            : 'the token does not verify';
      throw new Unauthenticated(reason, true, { cause: error });
    }
  }
}
