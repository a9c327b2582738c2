/**
 * Sealed layers (decisions part D, "Sealing"): call `args` and completion `result` are an
 * inner layer of the record body, encrypted per tenant with AES-256-GCM. The stored form
 * keeps the layer's digest and size in the clear beside the ciphertext,
 *
 *     {"sealed": {"digest": "hmac-sha256:…", "size": n, "box": "<base64url iv ‖ tag ‖ ciphertext>"}}
 *
 * so a public face serves `{"sealed": {digest, size}}` (records.ts `Sealed`) by dropping
 * `box`, with no key at hand, while the opened audit and the layer's own executor decrypt.
 *
 * The digest is an HMAC-SHA256 over the RFC 8785 (JCS) form of the plaintext, keyed per
 * tenant, and `size` its length in bytes. A plain hash would let anyone
 * who reads the public face confirm a guess of a short argument (an amount, a yes or no)
 * by hashing candidates; the keyed digest still tells two equal layers of one tenant
 * apart from different ones, and nothing more. (A gate's `args_digest`, which only the
 * executor sees beside the plaintext, stays a plain SHA-256: `src/gate/gate.ts`.) Layers
 * sealed before this carry `sha256:` digests and still open.
 *
 * Each tenant's key is derived from the one root key with HKDF-SHA256 under its own
 * label, the way `secret-box.ts` derives its keys, so a layer copied into another
 * tenant's session does not open; its digest key is derived from it in turn. The digest
 * is the GCM additional data, so a box moved under another layer's digest does not open.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hkdfSync,
  randomBytes,
} from 'node:crypto';
import canonicalize from 'canonicalize';

const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The keyed digest of a layer, and the plain one of layers sealed before it. */
const DIGEST = /^(hmac-sha256|sha256):[0-9a-f]{64}$/;

/** A layer's public description: what a public face serves in its place. */
export interface LayerDescription {
  /** `hmac-sha256:` and the hex HMAC, under the tenant's digest key, of the RFC 8785 form. */
  readonly digest: string;
  /** Bytes of that form. */
  readonly size: number;
}

/** A sealed layer as stored in a record body. */
export interface StoredLayer {
  readonly sealed: LayerDescription & {
    /** `base64url(iv ‖ tag ‖ ciphertext)` of the plaintext's RFC 8785 form. */
    readonly box: string;
  };
}

/** What opening a layer gave: the plaintext value, or why it did not open. */
export type LayerOpening =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: string };

/** Tenant keys derived so far, per root key (an HKDF run is about 0.1 ms; turns need many). */
const derived = new WeakMap<Buffer, Map<string, Buffer>>();
/** Tenants whose keys are remembered per root; past this the memory starts afresh. */
const REMEMBERED_TENANTS = 10_000;

/**
 * The sealing key of one tenant: HKDF-SHA256 of the 32-byte root key (`AppDeps.sealKey`,
 * the service's secrets key) under the label `session-layer/<tenant>`.
 */
export function tenantSealKey(root: Buffer, tenant: string): Buffer {
  if (root.length !== 32) throw new TypeError('the sealing root key must be 32 bytes');
  let keys = derived.get(root);
  if (keys === undefined) {
    keys = new Map();
    derived.set(root, keys);
  }
  let key = keys.get(tenant);
  if (key === undefined) {
    if (keys.size >= REMEMBERED_TENANTS) keys.clear();
    key = Buffer.from(hkdfSync('sha256', root, Buffer.alloc(0), `session-layer/${tenant}`, 32));
    keys.set(tenant, key);
  }
  return key;
}

/** Digest keys derived so far, per tenant sealing key. */
const digestKeys = new WeakMap<Buffer, Buffer>();

/** The key of a tenant's layer digests: HKDF of its sealing key, so it never encrypts. */
function digestKeyOf(tenantKey: Buffer): Buffer {
  let key = digestKeys.get(tenantKey);
  if (key === undefined) {
    key = Buffer.from(hkdfSync('sha256', tenantKey, Buffer.alloc(0), 'session-layer/digest', 32));
    digestKeys.set(tenantKey, key);
  }
  return key;
}

/** RFC 8785 text of a value; an absent value reads as `null`. */
function canonical(value: unknown): string {
  return canonicalize(value) ?? 'null';
}

function describe(text: string, tenantKey: Buffer): LayerDescription {
  const mac = createHmac('sha256', digestKeyOf(tenantKey)).update(text, 'utf8').digest('hex');
  return { digest: `hmac-sha256:${mac}`, size: Buffer.byteLength(text, 'utf8') };
}

/** Whether `text` is what `digest` describes, under either scheme a stored layer may carry. */
function matches(text: string, digest: string, tenantKey: Buffer): boolean {
  if (digest.startsWith('sha256:')) {
    return digest === `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
  }
  return digest === describe(text, tenantKey).digest;
}

/** The digest and size of a plaintext layer of a tenant, as its sealed form carries them. */
export function describeLayer(value: unknown, tenantKey: Buffer): LayerDescription {
  return describe(canonical(value), tenantKey);
}

/** Seals `value` under a tenant's key (`tenantSealKey`): the form to store in the body. */
export function sealLayer(value: unknown, tenantKey: Buffer): StoredLayer {
  const text = canonical(value);
  const description = describe(text, tenantKey);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', tenantKey, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(description.digest, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  const box = Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString('base64url');
  return { sealed: { ...description, box } };
}

/** True when `value` has the shape of a stored sealed layer (ciphertext included). */
export function isStoredLayer(value: unknown): value is StoredLayer {
  if (typeof value !== 'object' || value === null || !('sealed' in value)) return false;
  const { sealed } = value;
  return (
    typeof sealed === 'object' &&
    sealed !== null &&
    'digest' in sealed &&
    typeof sealed.digest === 'string' &&
    DIGEST.test(sealed.digest) &&
    'size' in sealed &&
    typeof sealed.size === 'number' &&
    'box' in sealed &&
    typeof sealed.box === 'string'
  );
}

/**
 * The public face of a layer (part D): `{sealed: {digest, size}}`. A stored layer gives
 * its own description; anything else (a plaintext layer a record landed unsealed) is
 * described from its value under the tenant's key, so a public face never shows
 * plaintext; without the key there is no description to give (null).
 */
export function publicLayer(
  value: unknown,
  tenantKey: Buffer | null,
): { readonly sealed: LayerDescription } | null {
  if (isStoredLayer(value)) {
    return { sealed: { digest: value.sealed.digest, size: value.sealed.size } };
  }
  return tenantKey === null ? null : { sealed: describeLayer(value, tenantKey) };
}

/**
 * Opens a stored layer under a tenant's key. A value that is not a sealed layer is
 * plaintext already and answers itself; a layer that does not decrypt, or whose
 * plaintext does not match its digest, answers why.
 */
export function openLayer(stored: unknown, tenantKey: Buffer): LayerOpening {
  if (!isStoredLayer(stored)) {
    if (typeof stored === 'object' && stored !== null && 'sealed' in stored) {
      return { ok: false, error: 'the sealed layer carries no ciphertext' };
    }
    return { ok: true, value: stored };
  }
  const { digest, box } = stored.sealed;
  const bytes = Buffer.from(box, 'base64url');
  if (bytes.length < IV_BYTES + TAG_BYTES) {
    return { ok: false, error: 'the sealed layer is truncated' };
  }
  let text: string;
  try {
    const decipher = createDecipheriv('aes-256-gcm', tenantKey, bytes.subarray(0, IV_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(digest, 'utf8'));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    text = Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    return {
      ok: false,
      error: "the sealed layer does not open under the tenant's key (altered or moved)",
    };
  }
  if (!matches(text, digest, tenantKey)) {
    return { ok: false, error: 'the opened layer does not match its digest' };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, error: 'the opened layer is not JSON' };
  }
}
