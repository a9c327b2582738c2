/**
 * Secret values at rest (interface 2.14; decisions row 55): AES-256-GCM with a fresh
 * random 96-bit IV per seal, and an HMAC-SHA256 digest that tells whether a new value
 * equals the stored one without decrypting it.
 *
 * Both keys are derived from the one 32-byte secrets key with HKDF-SHA256 under distinct
 * labels, so the digest key never encrypts and the raw key serves nothing directly.
 * Every seal and digest is bound to a context (the secret's scope and name): the
 * context is the GCM additional data, so a sealed value copied to another row does not
 * open, and the same value under two names has two unrelated digests.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';

const IV_BYTES = 12;
const TAG_BYTES = 16;

export interface SecretBox {
  /** `base64url(iv ‖ tag ‖ ciphertext)`. */
  seal(plaintext: string, context: string): string;
  /** The plaintext; throws when the value was tampered with, moved or sealed under another key. */
  open(sealed: string, context: string): string;
  /** `base64url(HMAC-SHA256(digest key, context ‖ 0 ‖ plaintext))`. */
  digest(plaintext: string, context: string): string;
  /** Compares two digests in constant time. */
  same(a: string, b: string): boolean;
}

function derive(key: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), label, 32));
}

/** A box for one purpose (the label keeps keys of different uses apart). */
export function createSecretBox(secretsKey: Buffer, purpose: string): SecretBox {
  if (secretsKey.length !== 32) throw new TypeError('the secrets key must be 32 bytes');
  const encryptionKey = derive(secretsKey, `${purpose}/aes-256-gcm`);
  const digestKey = derive(secretsKey, `${purpose}/hmac-sha256`);
  return {
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
    },
    open(sealed, context) {
      const bytes = Buffer.from(sealed, 'base64url');
      if (bytes.length < IV_BYTES + TAG_BYTES)
        throw new Error('a sealed secret value is truncated');
      const decipher = createDecipheriv('aes-256-gcm', encryptionKey, bytes.subarray(0, IV_BYTES), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const plaintext = Buffer.concat([
        decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]);
      return plaintext.toString('utf8');
    },
    digest(plaintext, context) {
      return createHmac('sha256', digestKey)
        .update(context)
        .update('\0')
        .update(plaintext)
        .digest('base64url');
    },
    same(a, b) {
      const left = Buffer.from(a, 'base64url');
      const right = Buffer.from(b, 'base64url');
      return left.length === right.length && timingSafeEqual(left, right);
    },
  };
}
