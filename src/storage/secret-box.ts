/**
 * Secret values at rest (interface 2.14; decisions row 55): AES-256-GCM with a fresh
 * random 96-bit IV per seal, and an HMAC-SHA256 digest that tells whether a new value
 * equals the stored one without decrypting it.
 *
 * Both keys are derived from a 32-byte secrets key with HKDF-SHA256 under distinct labels,
 * so the digest key never encrypts and the raw key serves nothing directly. Every seal and
 * digest is bound to a context (the secret's scope and name): the context is the GCM
 * additional data, so a sealed value copied to another row does not open, and the same
 * value under two names has two unrelated digests.
 *
 * Rotation. The secrets key is a ring: the current key seals, and every
 * key of the ring opens. Each sealed value and digest carries the id of the key it was
 * made under (`<key id>.<base64url>`), so the right key is found at once; a value sealed
 * before ids existed (no id) is tried under each key, and GCM's tag tells the one that
 * fits. `npm run secrets:rotate` puts a new key in front of the ring.
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

/** The secrets keys of a deployment: `current` seals, each of `previous` still opens. */
export interface SecretsKeyring {
  readonly current: Buffer;
  /** Older keys, newest first; the last is the first key the deployment ever had. */
  readonly previous: readonly Buffer[];
}

export interface SecretBox {
  /** `<key id>.base64url(iv ‖ tag ‖ ciphertext)` under the current key. */
  seal(plaintext: string, context: string): string;
  /** The plaintext; throws when the value was tampered with, moved or sealed under no key of the ring. */
  open(sealed: string, context: string): string;
  /** `<key id>.base64url(HMAC-SHA256(digest key, context ‖ 0 ‖ plaintext))` under the current key. */
  digest(plaintext: string, context: string): string;
  /** Whether `stored` (a digest of this box, under any key of the ring) is the digest of `plaintext`. */
  matches(stored: string, plaintext: string, context: string): boolean;
}

/** A key's id: 8 base64url characters derived from the key, so nothing needs storing. */
export function keyId(key: Buffer): string {
  return createHmac('sha256', key).update('secrets-key/id').digest('base64url').slice(0, 8);
}

/** The ring of `key`: one key alone, or a ring as it is (each key checked). */
export function keyringOf(key: Buffer | SecretsKeyring): SecretsKeyring {
  const ring = Buffer.isBuffer(key) ? { current: key, previous: [] } : key;
  for (const each of [ring.current, ...ring.previous]) {
    if (each.length !== 32) throw new TypeError('the secrets key must be 32 bytes');
  }
  return ring;
}

/** The first key the deployment had: what derived keys that must never change stand on. */
export function rootKey(key: Buffer | SecretsKeyring): Buffer {
  const ring = keyringOf(key);
  return ring.previous.at(-1) ?? ring.current;
}

function derive(key: Buffer, label: string): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), label, 32));
}

interface BoxKeys {
  readonly id: string;
  readonly encryption: Buffer;
  readonly digest: Buffer;
}

/** `[key id, rest]` of a stored value, or `[null, value]` for one made before ids. */
function split(stored: string): [string | null, string] {
  const dot = stored.indexOf('.');
  return dot < 0 ? [null, stored] : [stored.slice(0, dot), stored.slice(dot + 1)];
}

function mac(keys: BoxKeys, plaintext: string, context: string): Buffer {
  return createHmac('sha256', keys.digest).update(context).update('\0').update(plaintext).digest();
}

function openWith(keys: BoxKeys, bytes: Buffer, context: string): string {
  const decipher = createDecipheriv('aes-256-gcm', keys.encryption, bytes.subarray(0, IV_BYTES), {
    authTagLength: TAG_BYTES,
  });
  decipher.setAAD(Buffer.from(context, 'utf8'));
  decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([
    decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
    decipher.final(),
  ]).toString('utf8');
}

/** A box for one purpose (the label keeps keys of different uses apart). */
export function createSecretBox(secretsKey: Buffer | SecretsKeyring, purpose: string): SecretBox {
  const ring = keyringOf(secretsKey);
  const all: BoxKeys[] = [ring.current, ...ring.previous].map((key) => ({
    id: keyId(key),
    encryption: derive(key, `${purpose}/aes-256-gcm`),
    digest: derive(key, `${purpose}/hmac-sha256`),
  }));
  const [current] = all;
  if (current === undefined) throw new TypeError('the secrets keyring is empty');
  /** The keys a stored value may be under: the one its id names, or all of them. */
  const candidates = (id: string | null): BoxKeys[] =>
    id === null ? [...all].reverse() : all.filter((keys) => keys.id === id);
  return {
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current.encryption, iv, {
        authTagLength: TAG_BYTES,
      });
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const box = Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
      return `${current.id}.${box}`;
    },
    open(sealed, context) {
      const [id, rest] = split(sealed);
      const bytes = Buffer.from(rest, 'base64url');
      if (bytes.length < IV_BYTES + TAG_BYTES)
        throw new Error('a sealed secret value is truncated');
      const keys = candidates(id);
      if (keys.length === 0)
        throw new Error(`a sealed secret value names key ${id ?? ''}, which is not in the ring`);
      let failure: unknown;
      for (const each of keys) {
        try {
          return openWith(each, bytes, context);
        } catch (error) {
          failure = error;
        }
      }
      throw failure instanceof Error ? failure : new Error('a sealed secret value does not open');
    },
    digest(plaintext, context) {
      return `${current.id}.${mac(current, plaintext, context).toString('base64url')}`;
    },
    matches(stored, plaintext, context) {
      const [id, rest] = split(stored);
      const presented = Buffer.from(rest, 'base64url');
      return candidates(id).some((keys) => {
        const expected = mac(keys, plaintext, context);
        return presented.length === expected.length && timingSafeEqual(presented, expected);
      });
    },
  };
}
