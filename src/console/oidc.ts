/**
 * The OpenID Connect side of `POST /console/token` (decisions row 73): an ID token from
 * the configured issuer, verified with jose against the issuer's JWKS, names a console
 * user. The JWKS address comes from the issuer's discovery document
 * (`<issuer>/.well-known/openid-configuration`, OpenID Connect Discovery 1.0 §4), read
 * once and kept; jose keeps the keys and refetches them when a token names a new `kid`.
 *
 * The user is the token's `sub` claim: the one identifier OpenID Connect Core §2 makes
 * stable and unique per issuer (`email` may change and need not be verified).
 */
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, type JWTVerifyGetKey } from 'jose';
import { z } from 'zod';
import type { Clock } from '../clock.ts';
import { Unauthenticated, UpstreamFailure } from '../errors.ts';
import { User } from '../schemas/console.ts';

/**
 * The signing algorithms an ID token may use unless `CONSOLE_OIDC_ALGORITHMS` says others:
 * pinned, so a token's own `alg` header never chooses how it is
 * checked. RS256 is what OpenID Connect Core §15.1 requires every issuer to offer.
 */
export const DEFAULT_OIDC_ALGORITHMS: readonly string[] = ['RS256', 'ES256'];

/** Every asymmetric JWS algorithm the service can be told to accept (no `none`, no HMAC). */
export const OIDC_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
] as const;

/** How long the issuer gets to answer a discovery or JWKS request. */
const FETCH_TIMEOUT_MS = 5_000;
/** Clock skew tolerated between the issuer and this service. */
const CLOCK_TOLERANCE_S = 30;

const DiscoveryDocument = z.object({
  issuer: z.string().min(1),
  jwks_uri: z.url(),
  token_endpoint: z.url().optional(),
});

export interface OidcOptions {
  /** `CONSOLE_OIDC_ISSUER`. */
  readonly issuer: string;
  /** `CONSOLE_OIDC_AUDIENCE`: the client id the ID tokens are issued to. */
  readonly audience: string;
  /** `CONSOLE_OIDC_ALGORITHMS`: the only algorithms a token may be signed with. */
  readonly algorithms?: readonly string[];
  readonly clock: Clock;
}

interface Issuer {
  /** The issuer as its discovery document spells it: what `iss` must equal exactly. */
  readonly issuer: string;
  readonly keys: JWTVerifyGetKey;
  /** Where the consent page exchanges its authorization code, when the issuer says. */
  readonly tokenEndpoint: string | undefined;
}

/** Trailing slashes aside, two issuer identifiers are the same URL. */
function sameIssuer(a: string, b: string): boolean {
  return a.replace(/\/+$/, '') === b.replace(/\/+$/, '');
}

/**
 * True for failures of the issuer (unreachable, not answering 200, a malformed JWKS), as
 * against failures of the token. jose raises the plain `JOSEError` for a non-200 JWKS
 * answer and lets network errors through as they are.
 */
function issuerFailed(error: unknown): boolean {
  if (!(error instanceof joseErrors.JOSEError)) return true;
  return (
    error instanceof joseErrors.JWKSTimeout ||
    error instanceof joseErrors.JWKSInvalid ||
    error.constructor === joseErrors.JOSEError
  );
}

/** Verifies console ID tokens from one issuer. */
export class OidcVerifier {
  readonly #options: OidcOptions;
  #issuer: Promise<Issuer> | undefined;

  constructor(options: OidcOptions) {
    this.#options = options;
  }

  /** `CONSOLE_OIDC_ISSUER`, as configured. */
  get issuer(): string {
    return this.#options.issuer;
  }

  /** The client id the ID tokens are issued to: the consent page signs in as this client. */
  get audience(): string {
    return this.#options.audience;
  }

  /**
   * The origins a browser signing in with this issuer talks to: the issuer's (discovery)
   * and its token endpoint's, for the consent page's `connect-src`. An issuer that does
   * not answer now gives its own origin only; the page then says sign-in failed.
   */
  async browserOrigins(): Promise<string[]> {
    const origins = new Set([new URL(this.#options.issuer).origin]);
    try {
      const { tokenEndpoint } = await this.#issuerOnce();
      if (tokenEndpoint !== undefined) origins.add(new URL(tokenEndpoint).origin);
    } catch {
      // Not reachable now: the page's own discovery request will say so.
    }
    return [...origins];
  }

  /** Reads the discovery document; a failure is not kept, so the next call tries again. */
  async #discover(): Promise<Issuer> {
    const configured = this.#options.issuer;
    const url = `${configured.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let body: unknown;
    try {
      const response = await fetch(url, {
        headers: { accept: 'application/json' },
        redirect: 'error',
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      if (!response.ok) throw new Error(`the discovery document answered ${response.status}`);
      body = await response.json();
    } catch (error) {
      throw new UpstreamFailure('oidc_unavailable', 'the OpenID Connect issuer did not answer', {
        cause: error,
      });
    }
    const parsed = DiscoveryDocument.safeParse(body);
    // Discovery §4.3: the document's issuer must be the one configured.
    if (!parsed.success || !sameIssuer(parsed.data.issuer, configured)) {
      throw new UpstreamFailure(
        'oidc_unavailable',
        'the OpenID Connect discovery document is not valid for the configured issuer',
      );
    }
    return {
      issuer: parsed.data.issuer,
      keys: createRemoteJWKSet(new URL(parsed.data.jwks_uri), {
        timeoutDuration: FETCH_TIMEOUT_MS,
      }),
      tokenEndpoint: parsed.data.token_endpoint,
    };
  }

  #issuerOnce(): Promise<Issuer> {
    const pending = (this.#issuer ??= this.#discover());
    pending.catch(() => {
      if (this.#issuer === pending) this.#issuer = undefined;
    });
    return pending;
  }

  /**
   * The console user an ID token names. A token that does not verify (signature, `iss`,
   * `aud`, `exp`, a `sub` that is no user name) is a 401; an issuer that cannot be read
   * is a 502, since the token may well be good.
   */
  async verify(idToken: string): Promise<string> {
    const issuer = await this.#issuerOnce();
    let subject: unknown;
    try {
      const { payload } = await jwtVerify(idToken, issuer.keys, {
        issuer: issuer.issuer,
        audience: this.#options.audience,
        algorithms: [...(this.#options.algorithms ?? DEFAULT_OIDC_ALGORITHMS)],
        requiredClaims: ['sub', 'exp', 'iat'],
        clockTolerance: CLOCK_TOLERANCE_S,
        currentDate: new Date(this.#options.clock.now()),
      });
      subject = payload.sub;
    } catch (error) {
      if (issuerFailed(error)) {
        throw new UpstreamFailure('oidc_unavailable', 'the OpenID Connect keys could not be read', {
          cause: error,
        });
      }
      throw new Unauthenticated(reasonOf(error), true, { cause: error });
    }
    const user = User.safeParse(subject);
    if (!user.success) throw new Unauthenticated('the ID token names no usable subject', true);
    return user.data;
  }
}

/** Why a token failed, in words that never echo the token. */
function reasonOf(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'the ID token has expired';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) {
    return 'the ID token is signed with an algorithm this service does not accept';
  }
  if (error instanceof joseErrors.JWTClaimValidationFailed) {
    if (error.claim === 'iss') return 'the ID token is not from the configured issuer';
    if (error.claim === 'aud') return 'the ID token is not for this service';
    return `the ID token's ${error.claim} claim does not verify`;
  }
  return 'the ID token does not verify';
}
