import { createServer } from 'node:net';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { OidcVerifier } from '../../src/console/oidc.ts';
import { ServiceError } from '../../src/errors.ts';
import { startOidcIssuer, type OidcIssuer } from './oidc-issuer.ts';

const AUDIENCE = 'console-client';

let issuer: OidcIssuer;

beforeAll(async () => {
  issuer = await startOidcIssuer();
});
afterAll(async () => {
  await issuer.close();
});

function verifier(options: { issuer?: string; audience?: string } = {}) {
  return new OidcVerifier({
    issuer: options.issuer ?? issuer.issuer,
    audience: options.audience ?? AUDIENCE,
    clock: systemClock,
  });
}

/** The status and code a verification failed with. */
async function failure(promise: Promise<unknown>): Promise<{ status: number; code: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ServiceError) return { status: error.status, code: error.code };
    throw error;
  }
  throw new Error('the verification passed');
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

describe('OidcVerifier', () => {
  it('answers the sub claim of an ID token from the issuer', async () => {
    const token = await issuer.mint(AUDIENCE, { sub: 'ada-lovelace' });
    expect(await verifier().verify(token)).toBe('ada-lovelace');
  });

  it('reads the discovery document once and the JWKS it names', async () => {
    const check = verifier();
    const before = issuer.requests.length;
    await check.verify(await issuer.mint(AUDIENCE));
    await check.verify(await issuer.mint(AUDIENCE));
    expect(issuer.requests.slice(before)).toEqual(['/.well-known/openid-configuration', '/jwks']);
  });

  it('accepts a configured issuer written with a trailing slash', async () => {
    const token = await issuer.mint(AUDIENCE, { sub: 'grace' });
    expect(await verifier({ issuer: `${issuer.issuer}/` }).verify(token)).toBe('grace');
  });

  it('refuses tokens for another audience, from another issuer, expired or badly signed', async () => {
    const check = verifier();
    const refused = [
      await issuer.mint('another-client'),
      await issuer.mint(AUDIENCE, { iss: 'http://127.0.0.1:1' }),
      await issuer.mint(AUDIENCE, { expiresIn: -300 }),
      await issuer.mint(AUDIENCE, { foreignKey: true }),
      await issuer.mint(AUDIENCE, { sub: undefined }),
      await issuer.mint(AUDIENCE, { sub: 'x'.repeat(300) }),
      'not-a-jwt',
    ];
    for (const token of refused) {
      expect(await failure(check.verify(token))).toEqual({ status: 401, code: 'invalid_token' });
    }
  });

  it('refuses a token signed with a shared secret or none at all', async () => {
    const hs = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(issuer.issuer)
      .setAudience(AUDIENCE)
      .setSubject('mallory')
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('a shared secret of at least 32 bytes!!'));
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(
      JSON.stringify({ iss: issuer.issuer, aud: AUDIENCE, sub: 'mallory', exp: 9e9, iat: 1 }),
    ).toString('base64url')}.`;
    for (const token of [hs, none]) {
      expect(await failure(verifier().verify(token))).toEqual({
        status: 401,
        code: 'invalid_token',
      });
    }
  });

  it('answers 502 while the issuer cannot be read, and recovers once it can', async () => {
    const check = verifier();
    const token = await issuer.mint(AUDIENCE, { sub: 'linus' });
    issuer.failWith = 500;
    try {
      expect(await failure(check.verify(token))).toEqual({
        status: 502,
        code: 'oidc_unavailable',
      });
    } finally {
      issuer.failWith = undefined;
    }
    expect(await check.verify(token)).toBe('linus');
  });

  it('answers 502 when the discovery document names another issuer', async () => {
    issuer.discovery = { issuer: 'https://elsewhere.example' };
    try {
      const token = await issuer.mint(AUDIENCE);
      expect(await failure(verifier().verify(token))).toEqual({
        status: 502,
        code: 'oidc_unavailable',
      });
    } finally {
      issuer.discovery = {};
    }
  });

  it('answers 502 when the JWKS cannot be fetched', async () => {
    issuer.discovery = { jwks_uri: `http://127.0.0.1:${await closedPort()}/jwks` };
    try {
      const token = await issuer.mint(AUDIENCE);
      expect(await failure(verifier().verify(token))).toEqual({
        status: 502,
        code: 'oidc_unavailable',
      });
    } finally {
      issuer.discovery = {};
    }
  });

  it('answers 502 when no issuer listens at the configured address', async () => {
    const token = await issuer.mint(AUDIENCE);
    const check = verifier({ issuer: `http://127.0.0.1:${await closedPort()}` });
    expect(await failure(check.verify(token))).toEqual({ status: 502, code: 'oidc_unavailable' });
  });
});
