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
 * The scripts also publish the new head on the shard channel `<prefix>{<stream>}:wake`,
 * which shares the slot and so, on a cluster, the master of the keys: the reader
 * (`wake-reader.ts`) subscribes to it there. It is not a key.
 * `keySlot` computes the slot of a key or channel as the cluster does.
 * The tag is the whole stream name whatever it holds: a `}` inside it ends the tag early,
 * but at the same byte in every key and the channel, so they still share one slot.
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

/** The three keys of one session log, and its wake channel. */
export interface SessionKeys {
  readonly log: string;
  readonly meta: string;
  readonly keys: string;
  /** The shard channel a cluster's scripts publish the new head on; not a key. */
  readonly wake: string;
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
  // An empty tag `{}` does not count as one: each key would hash on its own.
  if (stream === '' || stream.startsWith('}')) {
    throw new Error(`log stream ${JSON.stringify(stream)} would leave its keys an empty hash tag`);
  }
  const base = `${prefix}{${stream}}`;
  return { log: `${base}:log`, meta: `${base}:meta`, keys: `${base}:keys`, wake: `${base}:wake` };
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

// The hash slot of a key or shard channel, computed as Redis Cluster does (CRC16/XMODEM
// of the hash tag, modulo 16384). The cluster reader needs it to find the master owning
// a session's wake channel before it subscribes there; asking the server (CLUSTER
// KEYSLOT) would cost a round trip per tailed session.

/** The number of hash slots of every Redis Cluster. */
export const SLOTS = 16384;

/** CRC16/XMODEM (polynomial 0x1021), as Redis Cluster's `crc16.c`, one table per process. */
const TABLE = Array.from({ length: 256 }, (_, byte) => {
  let crc = byte << 8;
  for (let bit = 0; bit < 8; bit++) {
    crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
});

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) {
    crc = ((crc << 8) & 0xffff) ^ (TABLE[((crc >> 8) ^ byte) & 0xff] ?? 0);
  }
  return crc;
}

/**
 * The slot of `key`. Only the hash tag counts when the key has one: the bytes between
 * the first `{` and the first `}` after it, when there is at least one (the cluster
 * specification's rule, which `sessionKeys` relies on to keep a session in one slot).
 */
export function keySlot(key: string): number {
  const bytes = Buffer.from(key, 'utf8');
  const open = bytes.indexOf(0x7b);
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) return crc16(bytes.subarray(open + 1, close)) % SLOTS;
  }
  return crc16(bytes) % SLOTS;
}
