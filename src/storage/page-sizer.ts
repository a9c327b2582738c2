/**
 * How many records a tail's next catch-up read asks for (`follow.ts`). A count alone
 * does not bound a page: records run from a few bytes to `MAX_RECORD_BODY_BYTES`
 * (256 KiB), so a Redis page of 500 could hold 128 MB, per tail catching up. The first
 * read asks for a few records; while pages come back full and well under `PAGE_BYTES`
 * the next asks for twice as many, up to the backend's page size, and a page over the
 * budget halves the next, down to one record. A long log of small records is thus read
 * in the backend's full pages after a few reads, and one of large records in pages of
 * about `PAGE_BYTES`.
 */

/** The bytes of bodies a catch-up page aims to stay under. */
export const PAGE_BYTES = 4 * 1024 * 1024;
/** Records the first read of a catch-up asks for, at most. */
export const FIRST_PAGE = 64;

export class PageSizer {
  readonly #max: number;
  #limit: number;

  /** `max`: the backend's page size, the most a read ever asks for. */
  constructor(max: number) {
    this.#max = max;
    this.#limit = Math.min(FIRST_PAGE, max);
  }

  /** Records the next read asks for. */
  get limit(): number {
    return this.#limit;
  }

  /** Sizes the next read after one that asked for `limit` and got `count` records of `bytes`. */
  took(count: number, bytes: number): void {
    if (bytes > PAGE_BYTES) {
      this.#limit = Math.max(1, Math.floor(this.#limit / 2));
    } else if (count >= this.#limit && bytes * 2 <= PAGE_BYTES) {
      this.#limit = Math.min(this.#max, this.#limit * 2);
    }
  }
}
