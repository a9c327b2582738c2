/**
 * The key caches of verified credentials file a bearer token under (the session tokens'
 * cache, the rate limit's buckets): its digest, not its text, since a process keeps an
 * entry for every token used in the last while and the text (over 500 bytes) would be
 * most of an entry.
 */
import { hash } from 'node:crypto';

/** Digests of the tokens of the last requests (`tokenCacheKey`). */
const RECENT_KEYS = new Map<string, string>();
const RECENT_KEYS_MAX = 256;

/**
 * What caches of verified credentials key a bearer token by: its SHA-256, 43 characters
 * where the token is over 500. Two tokens share a key only if SHA-256 collides. A
 * request's token is keyed twice, by the rate limit's bucket and by the route's
 * verification, with other requests' in between: the digests of the last few hundred
 * tokens are kept by their text, so a request pays one digest, not two.
 */
export function tokenCacheKey(token: string): string {
  let key = RECENT_KEYS.get(token);
  if (key === undefined) {
    key = hash('sha256', token, 'base64url');
    if (RECENT_KEYS.size >= RECENT_KEYS_MAX) RECENT_KEYS.clear();
    RECENT_KEYS.set(token, key);
  }
  return key;
}
