/**
 * The install key of a new app, and how the poll receipt can repeat it (decisions rows 30
 * and 32) without the service ever holding the key.
 *
 * Row 30 wants the same receipt, key included, on every poll until the proposal lapses,
 * yet row 32 stores credentials only as hashes. Instead of keeping the key (sealed or not)
 * between consent and the last poll, the key is a function of two halves held apart:
 *
 *   key = "ik_" ‖ base64url(HMAC-SHA256(salt, "install-key" ‖ 0 ‖ request ‖ 0 ‖ poll secret))
 *
 * - the poll secret (256 random bits) is shown once to the vendor and stored only hashed;
 * - the salt (256 random bits) is stored with the proposal and dropped once it lapses.
 *
 * At proposal time both halves are in hand, so the key's SHA-256 is stored then; consent
 * puts that hash on the install's `key` index; each poll that answers the receipt derives
 * the key again from the secret it presents. Neither a copy of the database (no secret)
 * nor a leaked poll secret after the lapse (no salt) yields the key, and the key is as
 * unpredictable as one drawn by `issueCredential`.
 */
import { createHmac } from 'node:crypto';
import { hashCredential } from '../auth/key-material.ts';
import type { Entropy } from '../clock.ts';

const LABEL = 'install-key';

/** What a new proposal stores to let its receipt carry the key. */
export interface KeyPlan {
  /** base64url of 32 random bytes, kept with the proposal until it lapses. */
  readonly salt: string;
  /** SHA-256 hex of the key: what the install's `key` index will hold. */
  readonly keyHash: string;
}

/** The install key a poll secret and a salt give for `request`. */
export function deriveInstallKey(pollSecret: string, salt: string, request: string): string {
  const mac = createHmac('sha256', Buffer.from(salt, 'base64url'))
    .update(LABEL)
    .update('\0')
    .update(request)
    .update('\0')
    .update(pollSecret)
    .digest();
  return `ik_${mac.toString('base64url')}`;
}

/** Draws the salt of a new proposal and the hash of the key it will give. */
export function planInstallKey(pollSecret: string, request: string, entropy: Entropy): KeyPlan {
  const salt = entropy.bytes(32).toString('base64url');
  return { salt, keyHash: hashCredential(deriveInstallKey(pollSecret, salt, request)) };
}

/**
 * The key of a receipt: derived from the presented poll secret, and only if it hashes to
 * the key the install holds (`keyHash`), else null.
 */
export function recoverInstallKey(
  pollSecret: string,
  salt: string,
  request: string,
  keyHash: string,
): string | null {
  const key = deriveInstallKey(pollSecret, salt, request);
  return hashCredential(key) === keyHash ? key : null;
}
