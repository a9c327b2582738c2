/**
 * The secrets keyring: the current key seals and names itself in what it
 * seals; every key of the ring still opens, so a rotation leaves old values readable; a
 * value sealed before key ids existed opens too.
 */
import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretBox, keyId, rootKey } from '../../src/storage/secret-box.ts';

const PURPOSE = 'test/secret-box';
const [k1, k2, k3] = [randomBytes(32), randomBytes(32), randomBytes(32)];

/** A value sealed as boxes did before key ids: `base64url(iv ‖ tag ‖ ciphertext)`. */
function sealedWithoutId(key: Buffer, plaintext: string, context: string): string {
  const encryption = Buffer.from(
    hkdfSync('sha256', key, Buffer.alloc(0), `${PURPOSE}/aes-256-gcm`, 32),
  );
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', encryption, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
}

describe('a secret box over a keyring', () => {
  it('seals under the current key, naming it, and opens what older keys sealed', () => {
    const before = createSecretBox(k1, PURPOSE);
    const old = before.seal('first value', 'ctx');
    expect(old.startsWith(`${keyId(k1)}.`)).toBe(true);

    const after = createSecretBox({ current: k2, previous: [k1] }, PURPOSE);
    const fresh = after.seal('second value', 'ctx');
    expect(fresh.startsWith(`${keyId(k2)}.`)).toBe(true);
    expect(after.open(old, 'ctx')).toBe('first value');
    expect(after.open(fresh, 'ctx')).toBe('second value');
    // The old ring cannot open what the new key sealed; the context still binds.
    expect(() => before.open(fresh, 'ctx')).toThrow('not in the ring');
    expect(() => after.open(old, 'another row')).toThrow();
  });

  it('opens a value sealed before key ids under whichever key of the ring made it', () => {
    const legacy = sealedWithoutId(k1, 'from before', 'ctx');
    const ring = createSecretBox({ current: k3, previous: [k2, k1] }, PURPOSE);
    expect(ring.open(legacy, 'ctx')).toBe('from before');
    expect(() => createSecretBox(k2, PURPOSE).open(legacy, 'ctx')).toThrow();
  });

  it('recognises an unchanged value by a digest made under an older key', () => {
    const digest = createSecretBox(k1, PURPOSE).digest('same', 'ctx');
    const ring = createSecretBox({ current: k2, previous: [k1] }, PURPOSE);
    expect(ring.matches(digest, 'same', 'ctx')).toBe(true);
    expect(ring.matches(digest, 'other', 'ctx')).toBe(false);
    expect(ring.digest('same', 'ctx')).not.toBe(digest);
    expect(createSecretBox(k3, PURPOSE).matches(digest, 'same', 'ctx')).toBe(false);
  });

  it('roots derived keys in the first key of the ring, and refuses keys of the wrong size', () => {
    expect(rootKey(k1)).toBe(k1);
    expect(rootKey({ current: k3, previous: [k2, k1] })).toBe(k1);
    expect(() => createSecretBox({ current: k1, previous: [randomBytes(16)] }, PURPOSE)).toThrow(
      '32 bytes',
    );
    expect(keyId(k1)).toMatch(/^[\w-]{8}$/);
    expect(keyId(k1)).not.toBe(keyId(k2));
  });
});
