/**
 * A real OpenID Connect issuer on loopback for console sign-in tests: it serves its
 * discovery document and JWKS over HTTP and mints ID tokens with jose, signed with its
 * key (or with a foreign key it never publishes, for tokens that must not verify).
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWTPayload } from 'jose';

const ALG = 'ES256';

interface KeyPair {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
}

async function keyPair(): Promise<KeyPair> {
  const pair = await generateKeyPair(ALG, { extractable: true });
  return { kid: randomUUID(), ...pair };
}

export interface MintOptions {
  readonly sub?: string | undefined;
  readonly aud?: string;
  readonly iss?: string;
  /** Seconds from now; negative for an expired token. */
  readonly expiresIn?: number;
  /** Sign with a key the JWKS never lists. */
  readonly foreignKey?: boolean;
  readonly claims?: JWTPayload;
}

export interface OidcIssuer {
  /** The issuer identifier, `http://127.0.0.1:<port>`. */
  readonly issuer: string;
  /** Paths requested so far, in order. */
  readonly requests: string[];
  /** Overrides members of the discovery document (e.g. a wrong `issuer`). */
  discovery: Record<string, unknown>;
  /** When set, every request answers this status and no body. */
  failWith: number | undefined;
  /** An ID token for `audience` from this issuer. */
  mint(audience: string, options?: MintOptions): Promise<string>;
  close(): Promise<void>;
}

/** Starts an issuer on a free loopback port. */
export async function startOidcIssuer(): Promise<OidcIssuer> {
  const key = await keyPair();
  const foreign = await keyPair();
  const jwk = { ...(await exportJWK(key.publicKey)), kid: key.kid, alg: ALG, use: 'sig' };
  const requests: string[] = [];
  let issuer = '';

  const state: { discovery: Record<string, unknown>; failWith: number | undefined } = {
    discovery: {},
    failWith: undefined,
  };
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    requests.push(path);
    const send = (status: number, body?: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(body === undefined ? undefined : JSON.stringify(body));
    };
    if (state.failWith !== undefined) {
      send(state.failWith);
    } else if (path === '/.well-known/openid-configuration') {
      send(200, {
        issuer,
        jwks_uri: `${issuer}/jwks`,
        authorization_endpoint: `${issuer}/authorize`,
        id_token_signing_alg_values_supported: [ALG],
        ...state.discovery,
      });
    } else if (path === '/jwks') {
      send(200, { keys: [jwk] });
    } else {
      send(404, { error: 'not_found' });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    requests,
    get discovery() {
      return state.discovery;
    },
    set discovery(value) {
      state.discovery = value;
    },
    get failWith() {
      return state.failWith;
    },
    set failWith(value) {
      state.failWith = value;
    },
    async mint(audience, options = {}) {
      const signer = options.foreignKey === true ? foreign : key;
      const now = Math.floor(Date.now() / 1000);
      let jwt = new SignJWT({ email: 'ada@example.test', ...options.claims })
        .setProtectedHeader({ alg: ALG, kid: signer.kid, typ: 'JWT' })
        .setIssuer(options.iss ?? issuer)
        .setAudience(options.aud ?? audience)
        .setIssuedAt(now - 5)
        .setExpirationTime(now + (options.expiresIn ?? 300));
      if (!('sub' in options)) jwt = jwt.setSubject(`sub-${randomUUID()}`);
      else if (options.sub !== undefined) jwt = jwt.setSubject(options.sub);
      return jwt.sign(signer.privateKey);
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => {
          if (error === undefined) resolve();
          else reject(error);
        });
      }),
  };
}
