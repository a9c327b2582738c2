import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OfferedRecord } from '../../src/schemas/records.ts';
import { canonicalJson } from '../../src/sessions/canonical-json.ts';
import { batchFingerprint } from '../../src/sessions/intake.ts';

/** Row 9 as first written: SHA-256 of the whole batch's RFC 8785 text. */
function wholeBatch(offered: readonly OfferedRecord[]): string {
  return createHash('sha256')
    .update(canonicalize(offered) ?? '', 'utf8')
    .digest('hex');
}

const kind = fc.record({
  name: fc.constantFrom('message.submitted', 'turn.cancel', 'x.y', 'a_b.c9'),
  version: fc.integer({ min: 1, max: 3 }),
});
const offeredRecord = fc.record({ kind, body: fc.jsonValue() });
// From the empty batch, which the route refuses but the digest still has a text for.
const batch = fc.array(offeredRecord, { maxLength: 8 });

describe('batchFingerprint', () => {
  it('is the SHA-256 of the batch as one canonical JSON text', () => {
    fc.assert(
      fc.property(batch, (offered) => {
        expect(batchFingerprint(offered)).toBe(wholeBatch(offered));
      }),
      { numRuns: 300 },
    );
  });

  it('gives the same digest when the bodies come already canonical', () => {
    fc.assert(
      fc.property(batch, (offered) => {
        const bodies = offered.map((record) => canonicalJson(record.body));
        expect(batchFingerprint(offered, bodies)).toBe(wholeBatch(offered));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the whole-batch digest for records not of the plain shape', () => {
    const unusual = [
      { kind: { name: 'x.y', version: 1 } },
      { kind: { name: 'x.y', version: 1, extra: true }, body: { b: 1, a: [2] } },
      { kind: { name: 'x.y', version: 1 }, body: 1, other: 'z' },
    ] as unknown as OfferedRecord[];
    expect(batchFingerprint(unusual)).toBe(wholeBatch(unusual));
  });

  it('tells batches apart by order, kind and body', () => {
    const a = { kind: { name: 'x.y', version: 1 }, body: { text: 'a' } };
    const b = { kind: { name: 'x.y', version: 1 }, body: { text: 'b' } };
    const fingerprints = new Set([
      batchFingerprint([a, b]),
      batchFingerprint([b, a]),
      batchFingerprint([a]),
      batchFingerprint([{ ...a, kind: { name: 'x.y', version: 2 } }]),
    ]);
    expect(fingerprints.size).toBe(4);
  });
});
