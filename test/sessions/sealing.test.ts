import { createCipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Sealed } from '../../src/schemas/records.ts';
import {
  describeLayer,
  isStoredLayer,
  openLayer,
  publicLayer,
  sealLayer,
  tenantSealKey,
  type StoredLayer,
} from '../../src/sessions/sealing.ts';

const root = randomBytes(32);
const tenant = `t-${randomUUID()}`;
const key = tenantSealKey(root, tenant);

function sha256(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

/** A layer as it was sealed before digests were keyed: plain SHA-256, the digest as AAD. */
function legacyLayer(value: unknown, tenantKey: Buffer): StoredLayer {
  const text = canonicalize(value) ?? 'null';
  const digest = sha256(text);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', tenantKey, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(digest));
  const ciphertext = Buffer.concat([cipher.update(text), cipher.final()]);
  const box = Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
  return { sealed: { digest, size: Buffer.byteLength(text), box } };
}

describe('tenantSealKey', () => {
  it('derives one stable 32-byte key per tenant, different across tenants and roots', () => {
    expect(tenantSealKey(root, tenant)).toEqual(key);
    expect(key).toHaveLength(32);
    expect(tenantSealKey(root, `${tenant}x`)).not.toEqual(key);
    expect(tenantSealKey(randomBytes(32), tenant)).not.toEqual(key);
    // The raw root never serves as a tenant key.
    expect(key).not.toEqual(root);
  });

  it('refuses a root that is not 32 bytes', () => {
    expect(() => tenantSealKey(randomBytes(16), tenant)).toThrow('32 bytes');
  });
});

describe('sealLayer and openLayer', () => {
  it('round-trip any JSON value, with the keyed digest and size of its RFC 8785 form', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const stored = sealLayer(value, key);
        const text = canonicalize(value) ?? 'null';
        expect(stored.sealed.digest).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
        expect(stored.sealed.digest).toBe(describeLayer(value, key).digest);
        expect(stored.sealed.size).toBe(Buffer.byteLength(text));
        expect(isStoredLayer(stored)).toBe(true);
        const opened = openLayer(stored, key);
        expect(opened).toEqual({ ok: true, value: JSON.parse(text) as unknown });
      }),
      { numRuns: 200 },
    );
  });

  it('seal the same value twice into different boxes with one digest', () => {
    const value = { path: '/etc/passwd', mode: 'r' };
    const a = sealLayer(value, key);
    const b = sealLayer({ mode: 'r', path: '/etc/passwd' }, key);
    expect(a.sealed.box).not.toBe(b.sealed.box);
    expect(a.sealed.digest).toBe(b.sealed.digest);
    expect(describeLayer(value, key)).toEqual({ digest: a.sealed.digest, size: a.sealed.size });
  });

  it('key the digest per tenant, so a guess of a short argument cannot be confirmed by hashing it', () => {
    // The public face shows this digest; it is no hash of the plaintext.
    const secret = { approve: true, amount: 50 };
    const digest = sealLayer(secret, key).sealed.digest;
    const guesses = [true, false].flatMap((approve) =>
      [10, 50, 100].map((amount) => canonicalize({ approve, amount }) ?? ''),
    );
    for (const guess of guesses) {
      expect(digest.slice(-64)).not.toBe(sha256(guess).slice(-64));
    }
    // Equal for the same tenant, unrelated across tenants.
    expect(sealLayer({ amount: 50, approve: true }, key).sealed.digest).toBe(digest);
    expect(sealLayer(secret, tenantSealKey(root, `other-${tenant}`)).sealed.digest).not.toBe(
      digest,
    );
  });

  it('still open layers sealed with the plain digest before, and check them against it', () => {
    const legacy = legacyLayer({ order: 'A-1' }, key);
    expect(openLayer(legacy, key)).toEqual({ ok: true, value: { order: 'A-1' } });
    expect(isStoredLayer(legacy)).toBe(true);
    expect(Sealed.safeParse(publicLayer(legacy, null)).success).toBe(true);
  });

  it("do not open under another tenant's key", () => {
    const stored = sealLayer({ secret: 1 }, key);
    const opened = openLayer(stored, tenantSealKey(root, `other-${tenant}`));
    expect(opened).toEqual({
      ok: false,
      error: expect.stringContaining('does not open') as string,
    });
  });

  it('do not open a box that was altered, truncated or moved under another digest', () => {
    const stored = sealLayer({ secret: 'a' }, key);
    const other = sealLayer({ secret: 'b' }, key);
    const bytes = Buffer.from(stored.sealed.box, 'base64url');
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
    const altered: StoredLayer = { sealed: { ...stored.sealed, box: bytes.toString('base64url') } };
    const truncated: StoredLayer = { sealed: { ...stored.sealed, box: 'AAAA' } };
    const moved: StoredLayer = { sealed: { ...other.sealed, box: stored.sealed.box } };
    expect(openLayer(altered, key).ok).toBe(false);
    expect(openLayer(truncated, key)).toEqual({
      ok: false,
      error: 'the sealed layer is truncated',
    });
    expect(openLayer(moved, key).ok).toBe(false);
  });

  it('answer plaintext as it is, and a public description without ciphertext as unreadable', () => {
    expect(openLayer({ a: 1 }, key)).toEqual({ ok: true, value: { a: 1 } });
    const description = publicLayer(sealLayer({ a: 1 }, key), null);
    expect(openLayer(description, key)).toEqual({
      ok: false,
      error: 'the sealed layer carries no ciphertext',
    });
  });
});

describe('publicLayer', () => {
  it('serves digest and size only, in the Sealed shape', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const stored = sealLayer(value, key);
        const face = publicLayer(stored, null);
        expect(face).toEqual({
          sealed: { digest: stored.sealed.digest, size: stored.sealed.size },
        });
        expect(Sealed.safeParse(face).success).toBe(true);
        // Plaintext that landed unsealed is described under the tenant's key, never shown;
        // without the key there is nothing to describe it with.
        expect(publicLayer(value, key)).toEqual(face);
        expect(publicLayer(value, null)).toBeNull();
      }),
      { numRuns: 100 },
    );
  });
});
