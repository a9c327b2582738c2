/**
 * The bucket a request counts against: the verified credential it
 * carries, or else its client address.
 *
 * The limit runs before the route authenticates (`onRequest`), so it identifies the
 * credential itself, by the kind the route takes, the first time this process sees it:
 *
 * - a session or grant token by its signature and claims (`SessionTokens.identify`), into
 *   the session tokens' cache, so the route's own check is a cache hit and the signature
 *   is checked once. Its bucket is `session:<session>:<producer>`: every token one
 *   producer holds for one session shares it, so minting more tokens buys nothing;
 * - an install key by the install its hash names (`install:<id>`): one read of the
 *   control store per key and process;
 * - a console token by its signature (`console:<user>`): one signature check per token
 *   and process besides the route's own.
 *
 * What a credential stands on (a revoked key, a removed member) is left to the route: a
 * credential that verified once keeps its bucket, and the route answers 401 or 404.
 * Identified credentials are remembered (a `TokenCache`, as the session tokens' cache
 * is), so from then on a request costs the token's digest and one map lookup here. A
 * request with no credential, or one that does not identify, counts against its client
 * address (`ip:<address>`; IPv6 by its /64, as a host usually holds a whole /64):
 * random bearers are one client per address. Behind a proxy the address is the one
 * `TRUST_PROXY` lets Fastify believe.
 */
import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyRequest } from 'fastify';
import { bearerOf } from '../auth/bearer.ts';
import { credentialLookup } from '../auth/opaque.ts';
import type { TokenService } from '../auth/tokens.ts';
import { INDEX } from '../resources/types.ts';
import { TokenCache } from '../sessions/token-cache.ts';
import type { SessionTokens } from '../sessions/tokens.ts';
import type { ControlStore } from '../storage/control-store.ts';
import { subprotocolToken } from './tails/session-reader.ts';

/** The credential a route takes, as far as its rate limit is concerned. */
export type CredentialKind = 'session' | 'install' | 'console';

/** Who a credential of one kind speaks for (its bucket), or null when it does not verify. */
export type Identify = (token: string) => Promise<string | null>;

/** What credentials are identified with. */
export interface IdentifyDeps {
  readonly sessionTokens: SessionTokens;
  readonly tokens: TokenService;
  readonly controlStore: ControlStore;
}

/** The identification of each kind of credential (see the module comment). */
export function identifiers(deps: IdentifyDeps): Readonly<Record<CredentialKind, Identify>> {
  return {
    session: async (token) => {
      const credential = await deps.sessionTokens.identify(token);
      return credential === null ? null : `session:${credential.session}:${credential.producer}`;
    },
    install: async (token) => {
      const hash = credentialLookup(token, 'ik');
      if (hash === null) return null;
      const [install] = await deps.controlStore.findByIndex('install', INDEX.key, hash);
      return install === undefined ? null : `install:${install.id}`;
    },
    console: async (token) => {
      const verified = await deps.tokens.verify(token, 'console');
      return `console:${verified.sub.replace(/^console:/, '')}`;
    },
  };
}

/** Credentials remembered by default; past that the one remembered longest ago goes. */
const DEFAULT_CAPACITY = 10_000;

/** The rate-limit buckets of requests, with the credentials this process identified. */
export class CredentialBuckets {
  readonly #known: TokenCache<string>;
  readonly #identify: Readonly<Record<CredentialKind, Identify>>;

  constructor(identify: Readonly<Record<CredentialKind, Identify>>, capacity = DEFAULT_CAPACITY) {
    this.#identify = identify;
    this.#known = new TokenCache(capacity);
  }

  /**
   * The bucket of `request` on a route taking credentials of `kind` (null: none, so the
   * address's). Never rejects.
   */
  bucketOf(request: FastifyRequest, kind: CredentialKind | null): string | Promise<string> {
    const token = presentedToken(request);
    if (token === null) return addressBucket(request);
    const known = this.#known.get(token);
    if (known !== undefined) return known;
    if (kind === null) return addressBucket(request);
    return this.#identify[kind](token).then(
      (bucket) => {
        if (bucket === null) return addressBucket(request);
        this.#known.set(token, bucket);
        return bucket;
      },
      () => addressBucket(request),
    );
  }
}

function addressBucket(request: FastifyRequest): string {
  return `ip:${normalizeIP(request.ip)}`;
}

/**
 * The credential of a request as the routes read it: `Authorization: Bearer`, or on a
 * WebSocket upgrade the `bearer` subprotocol or the `access_token` query (row 3). Null
 * when there is none or the header is no bearer credential.
 */
function presentedToken(request: FastifyRequest): string | null {
  let bearer: string | null;
  try {
    bearer = bearerOf(request.headers.authorization);
  } catch {
    return null;
  }
  if (bearer !== null || request.headers.upgrade === undefined) return bearer;
  const query = request.query as { readonly access_token?: unknown } | undefined;
  const accessToken = query?.access_token;
  return (
    subprotocolToken(request.headers['sec-websocket-protocol']) ??
    (typeof accessToken === 'string' && accessToken !== '' ? accessToken : null)
  );
}
