/**
 * Session ids (interface 2.1, decisions rows 4 to 6) and subject digests (row 38).
 *
 * An id is 72 lowercase hex characters: an 8-hex random shard followed by
 * HMAC-SHA256(key, install ‖ nonce) as 64 hex. The nonce (16 random bytes) is kept with
 * the session's directory record, so the owner check recomputes the digest for the
 * caller's install and compares in constant time: an id names its owner without saying
 * who it is, cannot be guessed, and a foreign one never verifies (row 5: 404).
 *
 * The HMAC key is derived once from the secrets key with HKDF (`deriveSessionIdKey`), so
 * ids minted by one process verify on every other process sharing the key material.
 * `‖` is written with a NUL between the parts: install ids and principals never hold NUL,
 * so two different pairs can never concatenate to the same text.
 */
import { createHash, createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';
import type { Entropy } from '../clock.ts';

/** Length of the random shard, in hex characters (row 5). */
export const SHARD_HEX = 8;
/** Bytes of the nonce an id's digest is made over. */
export const NONCE_BYTES = 16;

const SESSION_ID_INFO = 'agent-session-service/session-id/v1';

/** The HMAC key of session ids, derived from the secrets key (HKDF-SHA256, RFC 5869). */
export function deriveSessionIdKey(secretsKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', secretsKey, Buffer.alloc(0), SESSION_ID_INFO, 32));
}

/** A freshly minted id and the nonce its digest is made over. */
export interface MintedSessionId {
  /** 72 lowercase hex characters. */
  readonly id: string;
  /** Base64url; kept with the session so the owner check can recompute the digest. */
  readonly nonce: string;
}

function ownerDigest(key: Buffer, install: string, nonce: string): Buffer {
  return createHmac('sha256', key).update(`${install}\u0000${nonce}`).digest();
}

/** Mints a session id for `install` (row 5). */
export function mintSessionId(key: Buffer, install: string, entropy: Entropy): MintedSessionId {
  const shard = entropy.bytes(SHARD_HEX / 2).toString('hex');
  const nonce = entropy.bytes(NONCE_BYTES).toString('base64url');
  return { id: shard + ownerDigest(key, install, nonce).toString('hex'), nonce };
}

/**
 * True when `id` (lowercase, 72 hex) was minted for `install` with `nonce`: the owner
 * check of rows 5 and 7, in constant time.
 */
export function ownsSessionId(key: Buffer, id: string, install: string, nonce: string): boolean {
  const presented = Buffer.from(id.slice(SHARD_HEX), 'hex');
  const expected = ownerDigest(key, install, nonce);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** Row 38: the subject a session is filed under, SHA-256(install ‖ principal) as hex. */
export function subjectOf(install: string, principal: string): string {
  return createHash('sha256').update(`${install}\u0000${principal}`).digest('hex');
}
