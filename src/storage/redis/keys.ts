/**
 * The Redis key layout of the log store and the mapping between cursors and stream ids.
 *
 * One session is three keys, all carrying the hash tag `{<stream>}` so they hash to one
 * slot and a script may touch them together on a Redis Cluster:
 *
 * - `<prefix>{<stream>}:log`  the Redis stream holding the records;
 * - `<prefix>{<stream>}:meta` a hash: `head` (last minted cursor), `at` (last minted `at`),
 *   `archived` (`1` once the final record landed);
 * - `<prefix>{<stream>}:keys` a hash: idempotency key to `<first>:<last>:<fingerprint>`.
 *
 * Cursor and entry id (decisions row 13): the record at cursor `c` is the entry `c-0`.
 * The cursor is the id's milliseconds part, so the mapping is 1:1 both ways and every
 * cursor query is an id query: XRANGE `<from>` `<to - 1>` reads a cursor range (Redis
 * fills an incomplete start id with `-0` and an incomplete end id with the largest
 * sequence), and XREAD after `c-0` answers the records from `c + 1`. Putting `at` in the
 * id instead (`<at>-<seq>`) would make cursors unreachable by id; `0-<cursor>` would work
 * as well but makes every range bound a two-part id. The price of `c-0` is that entry ids
 * carry no time: `at` is an entry field, minted by the same script from Redis TIME. The
 * log is never trimmed, so nothing needs time in the id.
 */

/** The three keys of one session log. */
export interface SessionKeys {
  readonly log: string;
  readonly meta: string;
  readonly keys: string;
}

/**
 * Checks a key prefix: it may not contain a brace, or the session's hash tag would no
 * longer be the first `{…}` of its keys.
 */
export function checkPrefix(prefix: string): string {
  if (prefix.includes('{') || prefix.includes('}')) {
    throw new Error(`redis key prefix ${JSON.stringify(prefix)} may not contain { or }`);
  }
  return prefix;
}

/** The keys of `stream` under `prefix`. */
export function sessionKeys(prefix: string, stream: string): SessionKeys {
  const base = `${prefix}{${stream}}`;
  return { log: `${base}:log`, meta: `${base}:meta`, keys: `${base}:keys` };
}

/** The entry id of a cursor. */
export function entryId(cursor: number): string {
  return `${cursor}-0`;
}

/** The cursor of an entry id; throws on an id this store never writes. */
export function cursorOf(id: string): number {
  const match = /^(\d+)-0$/.exec(id);
  const cursor = match?.[1] === undefined ? Number.NaN : Number(match[1]);
  if (!Number.isSafeInteger(cursor) || cursor < 1) {
    throw new Error(`stream entry id ${JSON.stringify(id)} is not a log cursor`);
  }
  return cursor;
}

/**
 * Field names of a stream entry. Short names and few fields keep each entry small and
 * each XADD short: the kind is one field (`<name>@<version>`), the size is not stored
 * (it is the body's bytes), `to` and `idem` are absent when null, and `final` is present
 * only on the archiving record so a tail can end after it without another read.
 */
export const FIELD = {
  at: 'a',
  kind: 'k',
  producer: 'p',
  to: 't',
  idem: 'i',
  body: 'b',
  final: 'f',
} as const;
