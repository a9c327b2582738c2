/**
 * Which proxies the service believes about a client's address (`TRUST_PROXY`).
 * The address keys the rate limits of requests without a verified credential, so
 * believing `X-Forwarded-For` from anyone would let a client pick its own bucket: off by
 * default, and on only for a deployment that is reached through proxies alone.
 *
 * The answer is Fastify's `trustProxy` option: `false` (the socket's peer is the client),
 * `true` (the left-most `X-Forwarded-For` address, whoever sent it), or the addresses and
 * CIDRs of the proxies to believe (the client is the right-most address of the chain
 * that is not one of them). A hop count is not offered: Fastify trusts no peer under one.
 */
import { isIP } from 'node:net';

/** Fastify's `trustProxy` as `TRUST_PROXY` names it. */
export type TrustProxy = boolean | readonly string[];

/** The names proxy-addr (under Fastify's `trustProxy`) knows for address ranges. */
const RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isProxyAddress(entry: string): boolean {
  if (RANGE_NAMES.has(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  const max = family === 4 ? 32 : 128;
  return /^[0-9]{1,3}$/.test(bits) && Number(bits) <= max;
}

/**
 * Parses `TRUST_PROXY`: `off` (or `false`), `on` (or `true`), or proxy addresses and
 * CIDRs, comma-separated (`10.0.0.0/8,loopback`).
 * @throws Error naming the entry that is none of these.
 */
export function parseTrustProxy(value: string): TrustProxy {
  const text = value.trim().toLowerCase();
  if (text === 'off' || text === 'false') return false;
  if (text === 'on' || text === 'true') return true;
  const entries = text.split(',').map((entry) => entry.trim());
  const bad = entries.find((entry) => !isProxyAddress(entry));
  if (bad !== undefined) {
    throw new Error(
      `${bad === '' ? 'an empty entry' : bad} is not an address, a CIDR, loopback, linklocal or uniquelocal (or use off or on)`,
    );
  }
  return entries;
}
