import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadKeyMaterial } from '../../src/auth/key-material.ts';
import { TokenService } from '../../src/auth/tokens.ts';
import { ManualClock, systemEntropy } from '../../src/clock.ts';
import { Unauthenticated } from '../../src/errors.ts';
import { SESSION_TOKEN_TTL_MS, SessionTokens } from '../../src/sessions/tokens.ts';

let dir: string;
let service: TokenService;
let clock: ManualClock;
let tokens: SessionTokens;
const sid = 'ab'.repeat(36);

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tokens-'));
  const keys = await loadKeyMaterial({
    dataDir: dir,
    signingKeyPem: undefined,
    secretsKey: undefined,
    operatorToken: undefined,
  });
  clock = new ManualClock(Date.now());
  service = new TokenService(keys.signing, 'http://127.0.0.1', clock);
  tokens = new SessionTokens({ tokens: service, clock, entropy: systemEntropy, cacheSize: 2 });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('session tokens (5 rule 2, decisions rows 31, 32, 69)', () => {
  it('carry the producer, session, a fresh key, read and append, and the tenant for an hour', async () => {
    const request = { session: sid, producer: 'principal:ada', tenant: 't-1' };
    const one = await tokens.mint(request);
    const two = await tokens.mint(request);
    expect(one.expires).toBe(Math.floor((clock.now() + SESSION_TOKEN_TTL_MS) / 1000) * 1000);
    const claims = decodeJwt(one.token);
    expect(claims).toMatchObject({ aud: 'session', sub: 'principal:ada', sid, tid: 't-1' });
    expect(claims.scp).toEqual(['read', 'append']);
    const credential = await tokens.verify(one.token);
    expect(credential).toMatchObject({
      audience: 'session',
      producer: 'principal:ada',
      session: sid,
      tenant: 't-1',
      expires: one.expires,
    });
    expect(credential.key).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect([...credential.scopes]).toEqual(['read', 'append']);
    expect((await tokens.verify(two.token)).key).not.toBe(credential.key);
  });

  it('refuses a forged token, a console token, and a grant unless grants are asked for', async () => {
    const minted = await tokens.mint({ session: sid, producer: 'principal:ada', tenant: 't-1' });
    await expect(tokens.verify(`${minted.token.slice(0, -2)}xx`)).rejects.toBeInstanceOf(
      Unauthenticated,
    );
    const console = await service.mint('console', { sub: 'console:u', tid: 't-1' }, 60_000);
    await expect(tokens.verify(console.token, { grants: true })).rejects.toThrow(
      'the token is not for the session audience',
    );
    const grant = await service.mint(
      'grant',
      { sub: 'executor:x', sid, scp: ['complete'] },
      60_000,
    );
    await expect(tokens.verify(grant.token)).rejects.toBeInstanceOf(Unauthenticated);
    expect((await tokens.verify(grant.token, { grants: true })).audience).toBe('grant');
    // Cached as a grant, it is still refused where grants are not asked for.
    await expect(tokens.verify(grant.token)).rejects.toBeInstanceOf(Unauthenticated);
  });

  it('stops answering a cached token once it expires', async () => {
    const minted = await tokens.mint({ session: sid, producer: 'principal:ada', tenant: 't-1' });
    await tokens.verify(minted.token);
    clock.advance(SESSION_TOKEN_TTL_MS + 1000);
    const failure = await tokens.verify(minted.token).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Unauthenticated);
    expect((failure as Unauthenticated).message).toContain('expired');
  });
});
