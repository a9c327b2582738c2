/**
 * Idem slots numbered by a record's index in its batch, `<prefix><index>`: a holder's
 * slots are `<token key>:<index>` (decisions row 9), and the Redis log passes a batch of
 * such slots as the prefix alone (`src/storage/redis/entries.ts`).
 */

/** Where the decimal digits of `index` start at the end of `text`; -1 when they are not there. */
function digitsStart(text: string, index: number): number {
  let at = text.length;
  let rest = index;
  do {
    at -= 1;
    if (at < 0 || text.charCodeAt(at) !== 0x30 + (rest % 10)) return -1;
    rest = Math.floor(rest / 10);
  } while (rest > 0);
  return at;
}

/**
 * True when `text` is `<prefix><index>` (`index` a whole number), compared without making
 * that text. The prefix is compared by a slice and `===`, which V8 runs some five times
 * quicker than `startsWith` on the prefixes here (a token key: 100 slots in 4 µs against
 * 23), and a batch of 100 records checks its slots twice.
 */
export function isIndexedSlot(text: string | null, prefix: string, index: number): boolean {
  if (text === null) return false;
  const at = digitsStart(text, index);
  return at === prefix.length && text.slice(0, at) === prefix;
}
