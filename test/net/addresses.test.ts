/**
 * The guard's address decision as a pure function. Addresses outside
 * loopback are only ever decided here, never connected to.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.ts';
import {
  classifyAddress,
  decideAddress,
  embeddedIpv4,
  parseAllowList,
} from '../../src/net/addresses.ts';

const nothing = parseAllowList('');

describe('the address decision without an allow-list', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.100.100.200', 'private'],
    ['169.254.169.254', 'link-local'],
    ['169.254.0.1', 'link-local'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['fd00::1', 'unique-local'],
    ['fd00:ec2::254', 'unique-local'],
    ['fc00::1', 'unique-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::127.0.0.1', 'loopback'],
    ['::ffff:0:192.168.0.1', 'private'],
    ['64:ff9b::10.1.2.3', 'private'],
    ['2002:a9fe:a9fe::1', 'link-local'],
  ])('refuses %s as %s', (address, refused) => {
    expect(decideAddress(address, nothing)).toEqual({ allowed: false, class: refused });
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8'])(
    'allows the public address %s',
    (address) => {
      expect(decideAddress(address, nothing)).toEqual({ allowed: true });
      expect(classifyAddress(address)).toBeUndefined();
    },
  );

  it('refuses what is not an address at all', () => {
    expect(decideAddress('localhost', nothing)).toEqual({ allowed: false, class: 'invalid' });
  });

  it('reads the IPv4 address inside IPv6 forms, and none in a plain IPv6 address', () => {
    expect(embeddedIpv4('::ffff:10.0.0.1')).toBe('10.0.0.1');
    expect(embeddedIpv4('::ffff:a00:1')).toBe('10.0.0.1');
    expect(embeddedIpv4('64:ff9b::a00:1')).toBe('10.0.0.1');
    expect(embeddedIpv4('2002:0a00:0001::')).toBe('10.0.0.1');
    expect(embeddedIpv4('::1')).toBeUndefined();
    expect(embeddedIpv4('2001:4860:4860::8888')).toBeUndefined();
    expect(embeddedIpv4('10.0.0.1')).toBeUndefined();
  });
});

describe('EGRESS_ALLOW', () => {
  it('allows what it names and nothing else', () => {
    const allow = parseAllowList('127.0.0.0/8, ::1/128,10.1.0.0/16');
    expect(decideAddress('127.0.0.1', allow)).toEqual({ allowed: true });
    expect(decideAddress('::1', allow)).toEqual({ allowed: true });
    expect(decideAddress('::ffff:127.0.0.1', allow)).toEqual({ allowed: true });
    expect(decideAddress('10.1.2.3', allow)).toEqual({ allowed: true });
    expect(decideAddress('10.2.0.1', allow)).toEqual({ allowed: false, class: 'private' });
    expect(decideAddress('169.254.169.254', allow)).toMatchObject({ allowed: false });
    expect(decideAddress('8.8.8.8', allow)).toEqual({ allowed: true });
  });

  it('takes a bare address as itself', () => {
    const allow = parseAllowList('fd00:ec2::254');
    expect(decideAddress('fd00:ec2::254', allow)).toEqual({ allowed: true });
    expect(decideAddress('fd00:ec2::253', allow)).toMatchObject({ allowed: false });
  });

  it.each(['127.0.0.1/33', '::1/129', 'localhost', '10.0.0.0/8/1', '10.0.0/8', '1.2.3.4/x'])(
    'refuses the malformed entry %s',
    (entry) => {
      expect(() => parseAllowList(`127.0.0.0/8,${entry}`)).toThrow(/is not a CIDR/);
    },
  );
});

describe('EGRESS_ALLOW at start-up', () => {
  it('allows nothing by default, and what it names when set', () => {
    expect(parseConfig({}, '/').egressAllow.check('127.0.0.1')).toBe(false);
    expect(parseConfig({ EGRESS_ALLOW: '' }, '/').egressAllow.check('127.0.0.1')).toBe(false);
    const allow = parseConfig({ EGRESS_ALLOW: '127.0.0.0/8,::1/128' }, '/').egressAllow;
    expect(decideAddress('127.0.0.1', allow)).toEqual({ allowed: true });
    expect(decideAddress('::1', allow)).toEqual({ allowed: true });
  });

  it('refuses a malformed value, naming the variable', () => {
    const refused = (() => {
      try {
        parseConfig({ EGRESS_ALLOW: '127.0.0.0/8,10.0.0.0/33' }, '/');
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(ConfigError);
    expect(refused).toMatchObject({
      variable: 'EGRESS_ALLOW',
      message: 'EGRESS_ALLOW: "10.0.0.0/33" is not a CIDR such as 10.0.0.0/8 or fd00::/8',
    });
  });
});
