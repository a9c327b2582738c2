import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hashCredential, loadKeyMaterial } from '../../src/auth/key-material.ts';
import { credentialLookup, issueCredential } from '../../src/auth/opaque.ts';
import { TokenService } from '../../src/auth/tokens.ts';
import { ManualClock, systemEntropy } from '../../src/clock.ts';
import { Unauthenticated } from '../../src/errors.ts';

const dirs: string[] = [];
async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'keys-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const keyOptions = (dir: string) => ({
  dataDir: dir,
  signingKeyPem: undefined,
  secretsKey: undefined,
  operatorToken: undefined,
});

describe('key material', () => {
  it('is generated once into the data folder and survives a restart', async () => {
    const dir = await dataDir();
    const first = await loadKeyMaterial(keyOptions(dir));
    const second = await loadKeyMaterial(keyOptions(dir));
    expect(first.signing.kid).toBe(second.signing.kid);
    expect(first.secretsKey.equals(second.secretsKey)).toBe(true);
    expect(first.secretsKey).toHaveLength(32);
    expect((await stat(path.join(dir, 'keys', 'signing.pem'))).mode & 0o777).toBe(0o600);

    // A token minted before the restart verifies after it.
    const clock = new ManualClock();
    const before = new TokenService(first.signing, 'http://svc', clock);
    const after = new TokenService(second.signing, 'http://svc', clock);
    const minted = await before.mint(
      'session',
      { sub: 'principal:ada', sid: 'a'.repeat(72) },
      3_600_000,
    );
    await expect(after.verify(minted.token, 'session')).resolves.toMatchObject({
      sub: 'principal:ada',
      sid: 'a'.repeat(72),
    });
  });

  it('shows a generated operator token once and keeps only its hash', async () => {
    const dir = await dataDir();
    const first = await loadKeyMaterial(keyOptions(dir));
    const token = first.generatedOperatorToken;
    expect(token).toMatch(/^op_[A-Za-z0-9_-]{43}$/);
    const stored = await readFile(path.join(dir, 'keys', 'operator-token.sha256'), 'utf8');
    expect(stored).toBe(hashCredential(token ?? ''));
    expect(stored).not.toContain(token);
    const second = await loadKeyMaterial(keyOptions(dir));
    expect(second.generatedOperatorToken).toBeUndefined();
    expect(second.operatorTokenHash).toBe(first.operatorTokenHash);
  });
});

describe('tokens', () => {
  async function service(clock = new ManualClock()) {
    const keys = await loadKeyMaterial(keyOptions(await dataDir()));
    return { tokens: new TokenService(keys.signing, 'http://svc', clock), clock };
  }

  it('answers expires in ms as exp × 1000 (decisions row 31)', async () => {
    const { tokens, clock } = await service();
    const minted = await tokens.mint('console', { sub: 'console:ada', tid: 't1' }, 3_600_000);
    expect(minted.expires).toBe(Math.floor((clock.now() + 3_600_000) / 1000) * 1000);
    const verified = await tokens.verify(minted.token, 'console');
    expect(verified).toMatchObject({ aud: 'console', sub: 'console:ada', tid: 't1' });
    expect(verified.expires).toBe(minted.expires);
  });

  it('refuses a token of another audience as invalid_token', async () => {
    const { tokens } = await service();
    const grant = await tokens.mint('grant', { sub: 'executor:x', sid: 's' }, 60_000);
    const refusal = tokens.verify(grant.token, 'session');
    await expect(refusal).rejects.toBeInstanceOf(Unauthenticated);
    await expect(refusal).rejects.toMatchObject({
      code: 'invalid_token',
      headers: { 'www-authenticate': expect.stringContaining('error="invalid_token"') as unknown },
    });
  });

  it('refuses an expired token', async () => {
    const { tokens, clock } = await service();
    const minted = await tokens.mint('session', { sub: 'principal:ada' }, 1_000);
    clock.advance(2_000);
    await expect(tokens.verify(minted.token, 'session')).rejects.toThrow('expired');
  });

  it('refuses a token signed by another key or tampered with', async () => {
    const a = await service();
    const b = await service(a.clock);
    const minted = await a.tokens.mint('session', { sub: 'principal:ada' }, 60_000);
    await expect(b.tokens.verify(minted.token, 'session')).rejects.toThrow('does not verify');
    const [head, , sig] = minted.token.split('.');
    const forged = `${head ?? ''}.${Buffer.from('{"sub":"principal:eve"}').toString('base64url')}.${sig ?? ''}`;
    await expect(a.tokens.verify(forged, 'session')).rejects.toBeInstanceOf(Unauthenticated);
  });
});

describe('opaque credentials', () => {
  it('issues ik_ and ps_ values that are looked up only by their hash', () => {
    const key = issueCredential('ik', systemEntropy);
    expect(key.value).toMatch(/^ik_[A-Za-z0-9_-]{43}$/);
    expect(key.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(credentialLookup(key.value, 'ik')).toBe(key.hash);
    expect(credentialLookup(key.value, 'ps')).toBeNull();
    expect(credentialLookup('ik_short', 'ik')).toBeNull();
    expect(issueCredential('ps', systemEntropy).value).not.toBe(
      issueCredential('ps', systemEntropy).value,
    );
  });
});
