/**
 * Opaque credentials (decisions row 32): install keys `ik_…` and poll secrets `ps_…`,
 * 32 random bytes in base64url behind a prefix. They are shown once at issue; the stores
 * keep only their SHA-256 (`hashCredential`) and look them up by it.
 */
import type { Entropy } from '../clock.ts';
import { hashCredential } from './key-material.ts';

export type OpaquePrefix = 'ik' | 'ps';

const SHAPE = /^(ik|ps)_[A-Za-z0-9_-]{43}$/;

export interface IssuedCredential {
  /** The credential: returned to its holder once, never stored or logged. */
  readonly value: string;
  /** What the store keeps. */
  readonly hash: string;
}

/** Issues a fresh opaque credential. */
export function issueCredential(prefix: OpaquePrefix, entropy: Entropy): IssuedCredential {
  const value = `${prefix}_${entropy.bytes(32).toString('base64url')}`;
  return { value, hash: hashCredential(value) };
}

/** The hash to look a presented credential up by, or null if it cannot be one of ours. */
export function credentialLookup(presented: string, prefix: OpaquePrefix): string | null {
  if (!SHAPE.test(presented) || !presented.startsWith(`${prefix}_`)) return null;
  return hashCredential(presented);
}
