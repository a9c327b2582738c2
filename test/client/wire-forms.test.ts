/**
 * The client's own wire forms, checked against references: its RFC 8785 form and digest
 * against the `canonicalize` package the service digests call arguments with, and its
 * reading of `Retry-After` (RFC 9110 §10.2.3) in both forms.
 */
import { createHash } from 'node:crypto';
import { argsDigest, canonicalJson } from '@agent-session-service/client';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { backoffMs, DEFAULT_RETRY, retryAfterMs } from '../../packages/client/src/transport.ts';

describe('the RFC 8785 form', () => {
  it('is the one the service digests with, for any JSON value', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ stringUnit: 'binary' }), async (value) => {
        expect(canonicalJson(value)).toBe(canonicalize(value));
        const hex = createHash('sha256')
          .update(canonicalize(value) ?? 'null')
          .digest('hex');
        expect(await argsDigest(value)).toBe(`sha256:${hex}`);
      }),
      { numRuns: 300 },
    );
  });

  it('sorts keys by UTF-16 code units (not code points) and writes ES numbers', () => {
    // U+FF61 comes before U+1F600 as a code point, after it as UTF-16 (0xFF61 > 0xD83D).
    expect(canonicalJson({ b: 1, a: [1e21, 0.1, -0], '\uff61': true, '\ud83d\ude00': null })).toBe(
      '{"a":[1e+21,0.1,0],"b":1,"\ud83d\ude00":null,"\uff61":true}',
    );
  });
});

describe('Retry-After', () => {
  it('reads delta-seconds and HTTP dates, and nothing else', () => {
    const now = Date.UTC(2026, 0, 1, 12, 0, 0);
    expect(retryAfterMs('3', now)).toBe(3000);
    expect(retryAfterMs('Thu, 01 Jan 2026 12:00:07 GMT', now)).toBe(7000);
    expect(retryAfterMs('Thu, 01 Jan 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs(null, now)).toBeUndefined();
    expect(retryAfterMs('soon', now)).toBeUndefined();
  });

  it('bounds every wait, and backs off exponentially when the answer names none', () => {
    expect(backoffMs(DEFAULT_RETRY, 0)).toBe(250);
    expect(backoffMs(DEFAULT_RETRY, 3)).toBe(2000);
    expect(backoffMs(DEFAULT_RETRY, 20)).toBe(DEFAULT_RETRY.maxDelayMs);
    expect(backoffMs(DEFAULT_RETRY, 0, 3_600_000)).toBe(DEFAULT_RETRY.maxDelayMs);
    expect(backoffMs(DEFAULT_RETRY, 2, 1000)).toBe(1000);
  });
});
