import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isIndexedSlot } from '../../src/schemas/idem-slots.ts';

describe('isIndexedSlot', () => {
  it('is true exactly when the text is the prefix followed by the index', () => {
    const digits = fc.stringMatching(/^[0-9]{0,4}$/);
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 12 }),
        fc.nat(20_000),
        fc.oneof(digits, fc.string({ maxLength: 16 })),
        fc.boolean(),
        (prefix, index, tail, exact) => {
          // Half the texts are the slot itself, the rest anything near it.
          const text = exact ? `${prefix}${String(index)}` : `${prefix}${tail}`;
          expect(isIndexedSlot(text, prefix, index)).toBe(text === `${prefix}${String(index)}`);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('is false for no slot, and tells indexes apart', () => {
    expect(isIndexedSlot(null, 'k:', 0)).toBe(false);
    expect(isIndexedSlot('k:10', 'k:', 10)).toBe(true);
    expect(isIndexedSlot('k:10', 'k:1', 0)).toBe(true);
    expect(isIndexedSlot('k:10', 'k:', 1)).toBe(false);
    expect(isIndexedSlot('k:10', 'k:', 0)).toBe(false);
    expect(isIndexedSlot('0', '', 0)).toBe(true);
    expect(isIndexedSlot('', '', 0)).toBe(false);
  });
});
