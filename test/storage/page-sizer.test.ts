/**
 * A tail's catch-up pages (`src/storage/page-sizer.ts`): bounded in bytes as well as in
 * records, so a log of large records is read in pages of about the byte budget, while a
 * log of small ones reaches the backend's full page within a few reads.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FIRST_PAGE, PAGE_BYTES, PageSizer } from '../../src/storage/page-sizer.ts';

const MAX_BODY = 256 * 1024;

/** Reads a log of `records` records of `size` bytes each; answers each read's size. */
function reads(max: number, records: number, size: number): number[] {
  const sizer = new PageSizer(max);
  const asked: number[] = [];
  let left = records;
  while (left > 0) {
    const limit = sizer.limit;
    const count = Math.min(limit, left);
    asked.push(count);
    sizer.took(count, count * size);
    left -= count;
  }
  return asked;
}

describe('catch-up pages', () => {
  it('grow to the full page over small records within a few reads', () => {
    const asked = reads(500, 20_000, 200);
    expect(asked.slice(0, 5)).toEqual([FIRST_PAGE, 128, 256, 500, 500]);
  });

  it('shrink to about the byte budget over the largest records', () => {
    const asked = reads(500, 2_000, MAX_BODY);
    expect(asked[0]).toBe(FIRST_PAGE);
    expect(asked.slice(4).every((count) => count * MAX_BODY <= PAGE_BYTES)).toBe(true);
  });

  it('never ask for more than the page size, nor for nothing, whatever the sizes', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.integer({ min: 0, max: MAX_BODY }), { minLength: 1, maxLength: 200 }),
        (max, sizes) => {
          const sizer = new PageSizer(max);
          let over = 0;
          for (const size of sizes) {
            const limit = sizer.limit;
            expect(limit).toBeGreaterThanOrEqual(1);
            expect(limit).toBeLessThanOrEqual(max);
            const bytes = limit * size;
            // Once a page is over the budget, the next one asks for fewer records.
            if (over > 0) expect(limit).toBeLessThan(over);
            over = bytes > PAGE_BYTES && limit > 1 ? limit : 0;
            sizer.took(limit, bytes);
          }
        },
      ),
    );
  });
});
