/**
 * Session tokens (interface 5 rules 2 and 3, decisions rows 31 to 33, 69): a JWT for the
 * `session` audience naming the session it attaches to (`sid`), the producer it writes as
 * (`sub`: `principal:<n>` or `console:<user>`), its idempotency key (`idk`, row 9), its
 * scopes (`scp`) and the session's tenant (`tid`). It lives one hour; `expires` is ms.
 *
 * Verifying a JWT (an Ed25519 signature check) is the dearest step of an append, and a
 * client sends one token many times, so verified tokens are kept in a bounded cache by
 * their digest (`TokenCache`): a hit costs the token's digest (one SHA-256 a request, which
 * the rate limit's lookup of the same token has usually paid already), one map lookup and
 * an expiry check against the clock. A token whose signature fails never enters the
 * cache, so a forged one is checked every time.
 * The rate limit reads who a token speaks for before the route verifies it (`identify`),
 * through the same cache, so a fresh token's signature is checked once, not twice.
 *
 * A verified token still stops working when what it stands on goes away:
 * `TokenStanding` checks the install key it was minted under, its install's tombstone
 * and a console user's membership on every verification, cache hits included.
 */
import { errors as joseErrors } from 'jose';
import type { TokenService, VerifiedToken } from '../auth/tokens.ts';
import type { Clock, Entropy } from '../clock.ts';
import { Unauthenticated } from '../errors.ts';
import { TokenCache } from './token-cache.ts';
import { installKeyTag, type TokenStanding } from './token-standing.ts';

/** Decisions row 31: a session token lives one hour. */
export const SESSION_TOKEN_TTL_MS = 60 * 60 * 1000;

/** What a session token may do (row 32 `scp`). */
export type SessionScope = 'read' | 'append' | 'claim' | 'complete';

/** The scopes of a token minted by POST /sessions or a token endpoint. */
export const HOLDER_SCOPES: readonly SessionScope[] = ['read', 'append'];

/** A verified session or grant token, as the session routes read it. */
export interface SessionCredential {
  /** `session` for a holder's token, `grant` for an executor's grant of one call. */
  readonly audience: 'session' | 'grant';
  /** The producer the holder writes as (part D), from `sub`. */
  readonly producer: string;
  /** The session the token attaches to (`sid`); `''` if the token names none. */
  readonly session: string;
  /** The token's idempotency key (`idk`, row 9); `''` if it carries none. */
  readonly key: string;
  readonly scopes: ReadonlySet<string>;
  /** The tenant of the session (`tid`). */
  readonly tenant: string | null;
  /** Expiry, Unix ms. */
  readonly expires: number;
  /** A grant's call: the cursor of the invoke.allowed it completes (row 57). */
  readonly cause?: number;
  /** The tag of the install key the token was minted under (`ikt`), when an install minted it. */
  readonly installKey?: string;
}

/** What a new token is for. */
export interface SessionTokenRequest {
  readonly session: string;
  /** `principal:<n>` or `console:<user>`. */
  readonly producer: string;
  readonly tenant: string;
  readonly scopes?: readonly SessionScope[];
  /**
   * The stored hash of the install key the request came with, when an install mints: the
   * token then ends when that key is rotated or revoked.
   */
  readonly installKeyHash?: string;
}

/** 2.9 without the session id. */
export interface MintedSessionToken {
  readonly token: string;
  readonly expires: number;
}

export interface SessionTokensOptions {
  readonly tokens: TokenService;
  readonly clock: Clock;
  readonly entropy: Entropy;
  /** Verified tokens kept; the oldest is dropped first. Default 10 000. */
  readonly cacheSize?: number;
  /** Checks what each token stands on; without it a token is judged by its signature alone. */
  readonly standing?: TokenStanding;
}

/** Mints session tokens and verifies them, with a cache of verified ones. */
export class SessionTokens {
  readonly #tokens: TokenService;
  readonly #clock: Clock;
  readonly #entropy: Entropy;
  readonly #standing: TokenStanding | undefined;
  readonly #verified: TokenCache<SessionCredential>;
  /** Told when what tokens stand on changed in this process (`onStandingChange`). */
  readonly #changes = new Set<() => void>();

  constructor(options: SessionTokensOptions) {
    this.#tokens = options.tokens;
    this.#clock = options.clock;
    this.#entropy = options.entropy;
    this.#verified = new TokenCache(options.cacheSize ?? 10_000);
    this.#standing = options.standing;
  }

  /** Forgets what is known of an install whose key or tombstone changed in this process. */
  forgetInstall(install: string): void {
    this.#standing?.forgetInstall(install);
    for (const listener of this.#changes) listener();
  }

  /**
   * Calls `listener` whenever what tokens stand on changes through this process (a key
   * rotated or revoked, an install deleted), so holders of verified tokens (open tails)
   * can check theirs again at once. Answers the function that stops it.
   */
  onStandingChange(listener: () => void): () => void {
    this.#changes.add(listener);
    return () => {
      this.#changes.delete(listener);
    };
  }

  /** Mints a token attaching to one session, with a fresh idempotency key (rows 9, 31). */
  async mint(request: SessionTokenRequest): Promise<MintedSessionToken> {
    const minted = await this.#tokens.mint(
      'session',
      {
        sub: request.producer,
        sid: request.session,
        idk: this.#entropy.bytes(16).toString('base64url'),
        scp: request.scopes ?? HOLDER_SCOPES,
        tid: request.tenant,
        ...(request.installKeyHash === undefined
          ? {}
          : { ext: { ikt: installKeyTag(request.installKeyHash) } }),
      },
      SESSION_TOKEN_TTL_MS,
    );
    return { token: minted.token, expires: minted.expires };
  }

  /**
   * Mints the grant of one claim (2.17, row 57): audience `grant`, bound to the cause, the
   * one scope `complete`, and the call's completion slot `call:<cause>` as its idempotency
   * key (row 8), so every grant of the call, and the service's timeout, share one slot.
   */
  async mintGrant(request: {
    readonly session: string;
    readonly producer: string;
    readonly tenant: string;
    readonly cause: number;
    readonly expires: number;
  }): Promise<MintedSessionToken> {
    const minted = await this.#tokens.mint(
      'grant',
      {
        sub: request.producer,
        sid: request.session,
        idk: `call:${request.cause}`,
        scp: ['complete'],
        tid: request.tenant,
        ext: { cause: request.cause },
      },
      Math.max(1000, request.expires - this.#clock.now()),
    );
    return { token: minted.token, expires: minted.expires };
  }

  /**
   * Verifies a session token, or a grant token when `grants` is set (row 69: the status
   * route must tell a grant, which it refuses with 403, from a token that does not verify).
   * @throws Unauthenticated when the token does not verify, is expired, or is for
   *   another audience.
   */
  async verify(token: string, options: { grants?: boolean } = {}): Promise<SessionCredential> {
    const cached = this.#verified.get(token);
    if (cached !== undefined && cached.expires > this.#clock.now()) {
      if (cached.audience === 'grant' && options.grants !== true) throw wrongAudience();
      await this.stands(cached);
      return cached;
    }
    this.#verified.delete(token);
    const credential = credentialOf(await this.#signed(token, options.grants === true));
    await this.stands(credential);
    this.#verified.set(token, credential);
    return credential;
  }

  /**
   * Who a session or grant token speaks for, by its signature and claims alone, or null
   * when they do not verify: the rate limit's bucket, read before the
   * route authenticates. What the token stands on is left to `verify`, which finds the
   * token here in the cache and so does not check its signature again.
   */
  async identify(token: string): Promise<SessionCredential | null> {
    const cached = this.#verified.get(token);
    if (cached !== undefined && cached.expires > this.#clock.now()) return cached;
    let credential: SessionCredential;
    try {
      credential = credentialOf(await this.#signed(token, true));
    } catch {
      return null;
    }
    this.#verified.set(token, credential);
    return credential;
  }

  /** The token's verified claims: a session token, or a grant when `grants` is set. */
  async #signed(token: string, grants: boolean): Promise<VerifiedToken> {
    try {
      return await this.#tokens.verify(token, 'session');
    } catch (error) {
      if (!grants || !isAudienceFailure(error)) throw error;
      // Not a session token: a grant, or else the first failure says why.
      return this.#tokens.verify(token, 'grant').catch(() => {
        throw error;
      });
    }
  }

  /**
   * Checks again what a verified token stands on (its install key, its install, the
   * membership of the console user who minted it).
   * @throws Unauthenticated when it is gone.
   */
  async stands(credential: SessionCredential): Promise<void> {
    if (this.#standing === undefined) return;
    await this.#standing.check({
      session: credential.session,
      producer: credential.producer,
      tenant: credential.tenant,
      installKey: credential.installKey,
    });
  }
}

/**
 * The scope sets credentials share, one per distinct list: tokens are minted with a few
 * lists only, and a set of its own per cached credential would be a good part of the entry.
 */
const SCOPE_SETS = new Map<string, ReadonlySet<string>>();

function scopeSetOf(claim: unknown): ReadonlySet<string> {
  const scopes = Array.isArray(claim) ? claim.filter((s) => typeof s === 'string') : [];
  const name = scopes.join(' ');
  let set = SCOPE_SETS.get(name);
  if (set === undefined) {
    set = new Set(scopes);
    // Lists are only those of verified tokens, which this service minted: few and fixed.
    SCOPE_SETS.set(name, set);
  }
  return set;
}

/**
 * The one copy of a tenant id or install key tag this process holds: every verified
 * token decodes its own, and the token caches keep a credential for each of thousands of
 * sessions, which mostly share a few tenants and installs. Bounded: past INTERNED the
 * table starts afresh (a string not found is simply kept as decoded).
 */
const INTERNED = 10_000;
const interned = new Map<string, string>();

function intern(text: string): string {
  const held = interned.get(text);
  if (held !== undefined) return held;
  if (interned.size >= INTERNED) interned.clear();
  interned.set(text, text);
  return text;
}

function credentialOf(token: VerifiedToken): SessionCredential {
  return {
    audience: token.aud === 'grant' ? 'grant' : 'session',
    producer: token.sub,
    session: typeof token.sid === 'string' ? token.sid : '',
    key: typeof token.idk === 'string' ? token.idk : '',
    scopes: scopeSetOf(token.scp),
    tenant: typeof token.tid === 'string' ? intern(token.tid) : null,
    expires: token.expires,
    ...(token.aud === 'grant' && typeof token.ext?.cause === 'number'
      ? { cause: token.ext.cause }
      : {}),
    ...(typeof token.ext?.ikt === 'string' ? { installKey: intern(token.ext.ikt) } : {}),
  };
}

function isAudienceFailure(error: unknown): boolean {
  if (!(error instanceof Unauthenticated)) return false;
  const cause = error.cause;
  return cause instanceof joseErrors.JWTClaimValidationFailed && cause.claim === 'aud';
}

function wrongAudience(): Unauthenticated {
  return new Unauthenticated('the token is not for the session audience', true);
}
