/**
 * RFC 8785 (JSON Canonicalization Scheme) and the `sha256:<hex>` digest of it, as the
 * service pins a call's arguments in its gate (`args_digest`). Web Crypto only.
 */

/** The RFC 8785 form of `value`: ES number and string forms, keys in UTF-16 order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') {
    return JSON.stringify(value);
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError('RFC 8785 has no form for this number');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) {
    return `[${value.map((item: unknown) => (item === undefined ? 'null' : canonicalJson(item))).join(',')}]`;
  }
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      // Default string order compares UTF-16 code units, as RFC 8785 §3.2.3 sorts.
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(',')}}`;
  }
  throw new TypeError(`RFC 8785 has no form for a ${typeof value}`);
}

/** `sha256:<hex>` of the RFC 8785 form of `args`. */
export async function argsDigest(args: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(canonicalJson(args ?? null));
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  return `sha256:${Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}
