/**
 * Which addresses the service may connect to on a tenant's behalf: the
 * pure decision of the egress guard (`egress.ts`), made on the address a socket is about
 * to connect to, before it connects.
 *
 * Refused unless the deployment allows them (`EGRESS_ALLOW`): loopback, private (RFC 1918
 * and the RFC 6598 shared space), link-local (169.254.0.0/16 with the cloud metadata
 * address 169.254.169.254, fe80::/10), unique-local (fc00::/7, with AWS's fd00:ec2::254),
 * unspecified, multicast, broadcast and reserved ranges. An IPv6 address that carries an
 * IPv4 address (IPv4-mapped, IPv4-compatible, IPv4-translated, NAT64 64:ff9b::/96, 6to4)
 * is judged by the IPv4 address as well, so `::ffff:127.0.0.1` is loopback.
 */
import { BlockList, isIP, isIPv6 } from 'node:net';

/** Why an address is refused. */
export type AddressClass =
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'unique-local'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'reserved';

/** The guard's answer for one address. */
export type AddressDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly class: AddressClass | 'invalid' };

type Range = readonly [prefix: string, bits: number, refused: AddressClass];

/** IPv4 ranges the service never connects to unless allowed; the first match names the class. */
const IPV4_RANGES: readonly Range[] = [
  ['255.255.255.255', 32, 'broadcast'],
  ['0.0.0.0', 8, 'unspecified'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'private'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

/** IPv6 ranges, judged on the address itself (embedded IPv4 addresses are judged apart). */
const IPV6_RANGES: readonly Range[] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'reserved'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'private'],
  ['fc00::', 7, 'unique-local'],
  ['ff00::', 8, 'multicast'],
];

function ipv4Bytes(address: string): Uint8Array {
  return Uint8Array.from(address.split('.').map((part) => Number(part)));
}

/** The 16 bytes of an IPv6 address `isIPv6` accepted (zone id dropped). */
function ipv6Bytes(address: string): Uint8Array {
  let text = address.split('%')[0] ?? '';
  const dotted = /\d+\.\d+\.\d+\.\d+$/.exec(text)?.[0];
  if (dotted !== undefined) {
    // `::ffff:1.2.3.4` reads as `::ffff:102:304`.
    const [a = 0, b = 0, c = 0, d = 0] = ipv4Bytes(dotted);
    const words = [(a << 8) | b, (c << 8) | d].map((word) => word.toString(16)).join(':');
    text = `${text.slice(0, -dotted.length)}${words}`;
  }
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((w) => parseInt(w, 16)));
  const [head = '', rest] = text.split('::');
  const front = parse(head);
  const back = rest === undefined ? [] : parse(rest);
  const words = [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
  const bytes = new Uint8Array(16);
  words.slice(0, 8).forEach((word, i) => {
    bytes[2 * i] = word >> 8;
    bytes[2 * i + 1] = word & 0xff;
  });
  return bytes;
}

function bytesOf(address: string): Uint8Array {
  return isIPv6(address) ? ipv6Bytes(address) : ipv4Bytes(address);
}

function inRange(bytes: Uint8Array, prefix: Uint8Array, bits: number): boolean {
  for (let bit = 0; bit < bits; bit += 1) {
    const mask = 0x80 >> (bit % 8);
    const i = Math.floor(bit / 8);
    if (((bytes[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

function classOf(bytes: Uint8Array, ranges: readonly Range[]): AddressClass | undefined {
  return ranges.find(([prefix, bits]) => inRange(bytes, bytesOf(prefix), bits))?.[2];
}

const zero = (bytes: Uint8Array, from: number, to: number) =>
  bytes.slice(from, to).every((byte) => byte === 0);

/**
 * The IPv4 address an IPv6 address carries, when it is one of the forms that reach or
 * name an IPv4 host: mapped `::ffff:a.b.c.d`, compatible `::a.b.c.d`, translated
 * `::ffff:0:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d` and 6to4 `2002:aabb:ccdd::`.
 */
export function embeddedIpv4(address: string): string | undefined {
  if (!isIPv6(address)) return undefined;
  const b = ipv6Bytes(address);
  const v4 = (at: number) => Array.from(b.slice(at, at + 4)).join('.');
  if (zero(b, 0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(12);
  // `::` and `::1` are IPv6's own unspecified and loopback addresses, not IPv4-compatible.
  if (zero(b, 0, 12) && !(zero(b, 12, 15) && (b[15] ?? 0) <= 1)) return v4(12);
  if (zero(b, 0, 8) && b[8] === 0xff && b[9] === 0xff && zero(b, 10, 12)) return v4(12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(b, 4, 12)) {
    return v4(12);
  }
  if (b[0] === 0x20 && b[1] === 0x02) return v4(2);
  return undefined;
}

/** The class that makes `address` refused, or undefined for a public address. */
export function classifyAddress(address: string): AddressClass | undefined {
  const family = isIP(address);
  if (family === 4) return classOf(ipv4Bytes(address), IPV4_RANGES);
  const own = classOf(ipv6Bytes(address), IPV6_RANGES);
  if (own !== undefined) return own;
  const carried = embeddedIpv4(address);
  return carried === undefined ? undefined : classOf(ipv4Bytes(carried), IPV4_RANGES);
}

/**
 * The guard's decision on the address a socket is about to connect to: allowed when it is
 * in `allow` (`EGRESS_ALLOW`), or public; refused, with the class, otherwise.
 */
export function decideAddress(address: string, allow: BlockList): AddressDecision {
  const family = isIP(address);
  if (family === 0) return { allowed: false, class: 'invalid' };
  const carried = embeddedIpv4(address);
  if (
    allow.check(address, family === 4 ? 'ipv4' : 'ipv6') ||
    (carried !== undefined && allow.check(carried, 'ipv4'))
  ) {
    return { allowed: true };
  }
  const refused = classifyAddress(address);
  return refused === undefined ? { allowed: true } : { allowed: false, class: refused };
}

/**
 * Parses `EGRESS_ALLOW`: comma-separated CIDRs (`127.0.0.0/8,::1/128`); a bare address
 * stands for itself. Empty allows nothing beyond public addresses.
 * @throws Error naming the entry that is not a CIDR.
 */
export function parseAllowList(text: string): BlockList {
  const allow = new BlockList();
  for (const entry of text.split(',').map((part) => part.trim())) {
    if (entry === '') continue;
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    const prefix = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
    if (family === 0 || extra !== undefined || !(prefix >= 0 && prefix <= max)) {
      throw new Error(`${JSON.stringify(entry)} is not a CIDR such as 10.0.0.0/8 or fd00::/8`);
    }
    allow.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
  }
  return allow;
}
