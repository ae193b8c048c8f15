/**
 * IP addresses as numbers, and CIDR blocks over them. Written here rather than taken from
 * `node:net`'s `BlockList`: `BlockList` does match an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`)
 * against an IPv4 subnet, but it knows nothing of the other IPv6 forms that carry an IPv4 address
 * (IPv4-compatible, NAT64, 6to4), and the destination policy must look inside those. With every
 * address as one `bigint` (32 bits for IPv4, 128 for IPv6) a CIDR test is one shift and compare.
 */

import { isIP } from 'node:net';

export interface IpAddress {
  readonly family: 4 | 6;
  /** The address as an unsigned integer: 32 bits for IPv4, 128 bits for IPv6. */
  readonly value: bigint;
}

export interface Cidr {
  readonly family: 4 | 6;
  /** The network address (host bits zero). */
  readonly network: bigint;
  readonly prefix: number;
}

const bitsOf = (family: 4 | 6): number => (family === 4 ? 32 : 128);

/**
 * Parses an IP address in its textual form: IPv4 dotted decimal (exactly four decimal parts, as
 * `net.isIP` accepts them: no octal, hex or shortened forms), or IPv6 (RFC 4291 §2.2, with `::`
 * and a trailing dotted quad; a zone, `%eth0`, is dropped). Anything else is `undefined`.
 *
 * Strictness is the point: a URL's host has already been normalised by WHATWG URL parsing
 * (`http://0x7f.1/` has the host `127.0.0.1`), and a resolver's answer that is not a plain address
 * is refused rather than guessed at.
 */
export function parseIp(text: string): IpAddress | undefined {
  const family = isIP(text);
  if (family === 4) {
    const value = parseIpv4(text);
    return value === undefined ? undefined : { family: 4, value };
  }
  if (family === 6) {
    const value = parseIpv6(text);
    return value === undefined ? undefined : { family: 6, value };
  }
  return undefined;
}

function parseIpv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return undefined;
    const byte = Number(part);
    if (byte > 255) return undefined;
    value = (value << 8n) | BigInt(byte);
  }
  return value;
}

function parseIpv6(input: string): bigint | undefined {
  const zone = input.indexOf('%');
  let text = zone === -1 ? input : input.slice(0, zone);
  // A trailing dotted quad (RFC 4291 §2.2, form 3) stands for the last two 16-bit groups.
  const lastColon = text.lastIndexOf(':');
  if (text.indexOf('.', lastColon) !== -1) {
    const v4 = parseIpv4(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    text = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] === '' ? [] : halves[0]!.split(':');
  const tail = halves.length === 1 || halves[1] === '' ? [] : halves[1]!.split(':');
  let groups: string[];
  if (halves.length === 1) {
    groups = head;
  } else {
    const missing = 8 - head.length - tail.length;
    if (missing < 1) return undefined;
    groups = [...head, ...Array<string>(missing).fill('0'), ...tail];
  }
  if (groups.length !== 8) return undefined;
  let value = 0n;
  for (const group of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined;
    value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  }
  return value;
}

/** Dotted decimal of a 32-bit value. */
export function formatIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
}

/** RFC 5952 text of a 128-bit value (lower case, the longest run of two or more zero groups as `::`). */
export function formatIpv6(value: bigint): string {
  const groups = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart === -1) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

export function formatIp(ip: IpAddress): string {
  return ip.family === 4 ? formatIpv4(ip.value) : formatIpv6(ip.value);
}

/**
 * Parses `address/prefix`; a bare address is a block of one (`/32`, `/128`). Returns a string
 * saying what is wrong instead of throwing, so the caller can name the option it came from.
 */
export function parseCidr(text: string): Cidr | string {
  const slash = text.indexOf('/');
  const addressText = slash === -1 ? text : text.slice(0, slash);
  const ip = parseIp(addressText);
  if (ip === undefined || addressText.includes('%')) {
    return `"${text}" is not a CIDR block: write an IPv4 or IPv6 address and a prefix length, e.g. "10.1.0.0/16" or "fd00:1::/64"`;
  }
  const bits = bitsOf(ip.family);
  let prefix = bits;
  if (slash !== -1) {
    const prefixText = text.slice(slash + 1);
    if (!/^(0|[1-9][0-9]{0,2})$/.test(prefixText) || Number(prefixText) > bits) {
      return `"${text}" has an invalid prefix length: use 0 to ${bits} for an IPv${ip.family} block`;
    }
    prefix = Number(prefixText);
  }
  const hostBits = BigInt(bits - prefix);
  const network = (ip.value >> hostBits) << hostBits;
  if (network !== ip.value) {
    return `"${text}" has bits set after its /${prefix} prefix; did you mean "${formatIp({ family: ip.family, value: network })}/${prefix}"?`;
  }
  return { family: ip.family, network, prefix };
}

export function inCidr(ip: IpAddress, cidr: Cidr): boolean {
  if (ip.family !== cidr.family) return false;
  const hostBits = BigInt(bitsOf(ip.family) - cidr.prefix);
  return ip.value >> hostBits === cidr.network >> hostBits;
}

/** `::ffff:0:0/96` (RFC 4291 §2.5.5.2): an IPv6 socket reaches the IPv4 address in the low 32 bits. */
export function ipv4Mapped(ip: IpAddress): IpAddress | undefined {
  if (ip.family !== 6 || ip.value >> 32n !== 0xffffn) return undefined;
  return { family: 4, value: ip.value & 0xffffffffn };
}
