/**
 * What a process remembers per bearer token it verified (the session tokens' cache, the
 * rate limit's buckets): a bounded map, the entry remembered longest ago dropped first,
 * filed under the token's digest rather than its text, since a process keeps an entry for
 * every token used in the last while and the text (over 500 bytes) would be most of an
 * entry.
 */
import { hash } from 'node:crypto';

/** Digests of the tokens of the last requests (`tokenCacheKey`). */
const RECENT_KEYS = new Map<string, string>();
const RECENT_KEYS_MAX = 256;

/**
 * What a token is filed under: its SHA-256, 43 characters where the token is over 500.
 * Two tokens share a key only if SHA-256 collides. A request's token is keyed twice, by
 * the rate limit's bucket and by the route's verification, with other requests' in
 * between: the digests of the last few hundred tokens are kept by their text, so a
 * request pays one digest, not two.
 */
function tokenCacheKey(token: string): string {
  let key = RECENT_KEYS.get(token);
  if (key === undefined) {
    key = hash('sha256', token, 'base64url');
    if (RECENT_KEYS.size >= RECENT_KEYS_MAX) RECENT_KEYS.clear();
    RECENT_KEYS.set(token, key);
  }
  return key;
}

/** Values remembered by token, at most `capacity`; see the module comment. */
export class TokenCache<V> {
  readonly #entries = new Map<string, V>();
  readonly #capacity: number;

  constructor(capacity: number) {
    this.#capacity = Math.max(1, capacity);
  }

  get(token: string): V | undefined {
    return this.#entries.get(tokenCacheKey(token));
  }

  delete(token: string): void {
    this.#entries.delete(tokenCacheKey(token));
  }

  /** Remembers `value` for `token`, dropping the entry remembered longest ago when full. */
  set(token: string, value: V): void {
    if (this.#entries.size >= this.#capacity) {
      const oldest = this.#entries.keys().next();
      if (oldest.done !== true) this.#entries.delete(oldest.value);
    }
    this.#entries.set(tokenCacheKey(token), value);
  }
}
