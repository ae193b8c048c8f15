import { BlockList } from 'node:net';
import { describe, expect, it } from 'vitest';
import { formatIp, formatIpv6, inCidr, ipv4Mapped, parseCidr, parseIp } from '../../src/push/ip.js';
import { classify } from '../../src/push/ranges.js';

const ip = (text: string) => {
  const parsed = parseIp(text);
  if (parsed === undefined) throw new Error(`${text} should parse`);
  return parsed;
};

const cidr = (text: string) => {
  const parsed = parseCidr(text);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
};

describe('parseIp', () => {
  it('reads dotted-decimal IPv4', () => {
    expect(ip('0.0.0.0')).toEqual({ family: 4, value: 0n });
    expect(ip('127.0.0.1')).toEqual({ family: 4, value: 0x7f000001n });
    expect(ip('255.255.255.255')).toEqual({ family: 4, value: 0xffffffffn });
  });

  it.each([
    '127.1',
    '0x7f.0.0.1',
    '0177.0.0.1',
    '010.0.0.1',
    '2130706433',
    '256.0.0.1',
    '1.2.3.4 ',
    ' 1.2.3.4',
    '1.2.3.4.5',
    '',
    'localhost',
    '1.2.3.-4',
  ])('refuses the non-canonical or invalid form %j', (text) => {
    expect(parseIp(text)).toBeUndefined();
  });

  it('reads IPv6 in its RFC 4291 §2.2 forms', () => {
    expect(ip('::')).toEqual({ family: 6, value: 0n });
    expect(ip('::1')).toEqual({ family: 6, value: 1n });
    expect(ip('1::')).toEqual({ family: 6, value: 1n << 112n });
    expect(ip('2001:DB8::8:800:200C:417A').value).toBe(0x20010db80000000000080800200c417an);
    expect(ip('0:0:0:0:0:0:0:1').value).toBe(1n);
    expect(ip('::ffff:1.2.3.4').value).toBe(ip('::ffff:102:304').value);
    expect(ip('::1.2.3.4').value).toBe(0x01020304n);
    expect(ip('64:ff9b::192.0.2.33').value).toBe(ip('64:ff9b::c000:221').value);
    expect(ip('fe80::1%eth0')).toEqual(ip('fe80::1'));
    expect(ip('1:2:3:4:5:6:7::')).toEqual(ip('1:2:3:4:5:6:7:0'));
  });

  it.each([
    '1:2:3:4:5:6:7:8:9',
    ':::',
    '1::2::3',
    '12345::',
    '::g',
    '1:2:3:4:5:6:7',
    '::1.2.3',
    '::1.2.3.256',
    '[::1]',
  ])('refuses the invalid IPv6 %j', (text) => {
    expect(parseIp(text)).toBeUndefined();
  });

  it('writes IPv6 the RFC 5952 way', () => {
    expect(formatIpv6(ip('2001:db8:0:0:1:0:0:1').value)).toBe('2001:db8::1:0:0:1');
    expect(formatIpv6(ip('2001:db8:0:1:1:1:1:1').value)).toBe('2001:db8:0:1:1:1:1:1');
    expect(formatIpv6(ip('2001:0db8:0000:0000:0000:0000:0000:0001').value)).toBe('2001:db8::1');
    expect(formatIpv6(0n)).toBe('::');
    expect(formatIpv6(1n)).toBe('::1');
    expect(formatIpv6(ip('1:0:0:2:0:0:0:3').value)).toBe('1:0:0:2::3');
    expect(formatIp(ip('10.1.2.3'))).toBe('10.1.2.3');
  });

  it('ipv4Mapped gives the IPv4 address of ::ffff:0:0/96 only', () => {
    expect(ipv4Mapped(ip('::ffff:10.0.0.5'))).toEqual(ip('10.0.0.5'));
    expect(ipv4Mapped(ip('::10.0.0.5'))).toBeUndefined();
    expect(ipv4Mapped(ip('1::ffff:10.0.0.5'))).toBeUndefined();
    expect(ipv4Mapped(ip('10.0.0.5'))).toBeUndefined();
  });
});

describe('CIDR blocks', () => {
  it('match at their edges', () => {
    const block = cidr('172.16.0.0/12');
    expect(inCidr(ip('172.15.255.255'), block)).toBe(false);
    expect(inCidr(ip('172.16.0.0'), block)).toBe(true);
    expect(inCidr(ip('172.31.255.255'), block)).toBe(true);
    expect(inCidr(ip('172.32.0.0'), block)).toBe(false);
    const v6 = cidr('fe80::/10');
    expect(inCidr(ip('fe7f:ffff::'), v6)).toBe(false);
    expect(inCidr(ip('fe80::'), v6)).toBe(true);
    expect(inCidr(ip('febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff'), v6)).toBe(true);
    expect(inCidr(ip('fec0::'), v6)).toBe(false);
  });

  it('never match across families', () => {
    expect(inCidr(ip('::'), cidr('0.0.0.0/0'))).toBe(false);
    expect(inCidr(ip('0.0.0.0'), cidr('::/0'))).toBe(false);
  });

  it('take a bare address as a block of one, and /0 as everything', () => {
    expect(cidr('10.0.0.5')).toEqual({ family: 4, network: 0x0a000005n, prefix: 32 });
    expect(cidr('fd00::1')).toMatchObject({ prefix: 128 });
    expect(inCidr(ip('203.0.113.9'), cidr('0.0.0.0/0'))).toBe(true);
  });

  it('refuse host bits after the prefix, saying which block was meant', () => {
    expect(parseCidr('192.168.1.1/16')).toContain('did you mean "192.168.0.0/16"?');
    expect(parseCidr('fd00::1/8')).toContain('did you mean "fd00::/8"?');
  });
});

describe('why not node:net BlockList alone', () => {
  it('BlockList matches IPv4-mapped IPv6 against an IPv4 subnet, but not the other IPv4-carrying forms', () => {
    const list = new BlockList();
    list.addSubnet('127.0.0.0', 8, 'ipv4');
    expect(list.check('::ffff:127.0.0.1', 'ipv6')).toBe(true);
    // IPv4-compatible, NAT64 and 6to4 forms of 127.0.0.1 slip through a BlockList of 127/8 ...
    expect(list.check('::127.0.0.1', 'ipv6')).toBe(false);
    expect(list.check('64:ff9b::7f00:1', 'ipv6')).toBe(false);
    expect(list.check('2002:7f00:1::1', 'ipv6')).toBe(false);
    // ... and classify() catches each of them.
    for (const text of ['::ffff:127.0.0.1', '::127.0.0.1', '64:ff9b::7f00:1', '2002:7f00:1::1']) {
      expect(classify(ip(text)), text).toBeDefined();
    }
  });
});
