/**
 * The egress guard as the tests use it: every MCP peer of the tests listens on loopback,
 * which the production default refuses, so tests allow loopback the way
 * a deployment would, through `EGRESS_ALLOW`.
 */
import { Egress, type EgressOptions } from '../../src/net/egress.ts';
import { parseAllowList } from '../../src/net/addresses.ts';

/** `EGRESS_ALLOW` for the test peers: IPv4 and IPv6 loopback. */
export const LOOPBACK_PEERS = '127.0.0.0/8,::1/128';

/** A guard that lets the test peers on loopback through, and refuses what production does. */
export function loopbackEgress(options: Omit<EgressOptions, 'allow'> = {}): Egress {
  return new Egress({ ...options, allow: parseAllowList(LOOPBACK_PEERS) });
}
