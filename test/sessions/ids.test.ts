import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { systemEntropy } from '../../src/clock.ts';
import {
  deriveSessionIdKey,
  mintSessionId,
  ownsSessionId,
  subjectOf,
} from '../../src/sessions/ids.ts';

const key = deriveSessionIdKey(randomBytes(32));

describe('session ids (2.1, decisions rows 4 to 6)', () => {
  it('are 72 lowercase hex characters: a random shard and the owner digest', () => {
    const one = mintSessionId(key, 'install-1', systemEntropy);
    const two = mintSessionId(key, 'install-1', systemEntropy);
    expect(one.id).toMatch(/^[0-9a-f]{72}$/);
    expect(one.id).not.toBe(two.id);
    expect(one.nonce).not.toBe(two.nonce);
  });

  it('verify for the install they were minted for, and for no other', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), (install, other) => {
        const { id, nonce } = mintSessionId(key, install, systemEntropy);
        expect(ownsSessionId(key, id, install, nonce)).toBe(true);
        if (other !== install) expect(ownsSessionId(key, id, other, nonce)).toBe(false);
      }),
      { numRuns: 200 },
    );
  });

  it('do not verify with another nonce, another key, or a changed digest', () => {
    const { id, nonce } = mintSessionId(key, 'install-1', systemEntropy);
    const otherNonce = randomBytes(16).toString('base64url');
    expect(ownsSessionId(key, id, 'install-1', otherNonce)).toBe(false);
    expect(ownsSessionId(deriveSessionIdKey(randomBytes(32)), id, 'install-1', nonce)).toBe(false);
    const flipped = `${id.slice(0, 71)}${id.endsWith('0') ? '1' : '0'}`;
    expect(ownsSessionId(key, flipped, 'install-1', nonce)).toBe(false);
    // The shard is random and outside the digest; the directory, keyed by the whole id, tells ids apart.
    expect(ownsSessionId(key, `ffffffff${id.slice(8)}`, 'install-1', nonce)).toBe(true);
  });

  it('derive one key per secrets key, not the secrets key itself', () => {
    const secrets = randomBytes(32);
    expect(deriveSessionIdKey(secrets).equals(deriveSessionIdKey(secrets))).toBe(true);
    expect(deriveSessionIdKey(secrets).equals(secrets)).toBe(false);
    expect(deriveSessionIdKey(secrets)).toHaveLength(32);
  });
});

describe('subject digests (decisions row 38)', () => {
  it('are the SHA-256 of install and principal, kept apart by a NUL', () => {
    const expected = createHash('sha256').update('in-1\u0000ada').digest('hex');
    expect(subjectOf('in-1', 'ada')).toBe(expected);
    expect(subjectOf('ab', 'c')).not.toBe(subjectOf('a', 'bc'));
    expect(subjectOf('in-1', 'ada')).not.toBe(subjectOf('in-2', 'ada'));
  });
});
