/**
 * The address ranges a push notification is never sent to, unless an allow-list says otherwise.
 *
 * Sources: the IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890 and the RFCs each
 * row names), plus ranges that are public on paper but where no webhook receiver can live
 * (documentation, benchmarking) or that carry an IPv4 address we must look at. A range is listed
 * here because calling it from a server could reach something that is not the open Internet:
 * this host, the local network, a provider's metadata service, or a tunnel that hides where the
 * request really goes.
 */

import { type Cidr, formatIpv4, type IpAddress, inCidr, parseCidr } from './ip.js';

export interface SpecialRange {
  readonly cidr: string;
  /** Completes "…resolves to X, ___": an indefinite noun phrase. */
  readonly label: string;
  /** Where the range is defined, e.g. "RFC 1918". */
  readonly source: string;
  /**
   * Not a unicast destination at all (unspecified, multicast, broadcast): refused even when an
   * allow-list names the host or the address. Connecting to `0.0.0.0` or `::` reaches this host on
   * Linux, and no receiver can sit behind a multicast or broadcast address, so allowing one is
   * always a mistake. (This narrows the allow-lists on purpose: they are for trusted internal
   * receivers, which have unicast addresses.)
   */
  readonly never?: true;
  /**
   * For IPv6 forms that carry an IPv4 address: where it is. The embedded address is checked
   * against the IPv4 ranges; the outer address is refused when it is, or when `alwaysRefuse`.
   */
  readonly embeds?: (value: bigint) => bigint;
  /** Refused whatever the embedded address is (the form is deprecated or its real target unknowable). */
  readonly alwaysRefuse?: true;
  /** The range is everything *outside* `cidr` (only {@link IPV6_GLOBAL_UNICAST}). */
  readonly outside?: true;
}

const low32 = (value: bigint): bigint => value & 0xffffffffn;

/** First match wins, so a narrower range comes before a wider one that contains it. */
export const IPV4_RANGES: readonly SpecialRange[] = [
  {
    cidr: '0.0.0.0/8',
    label: 'an unspecified ("this network") address, which reaches this host',
    source: 'RFC 791 §3.2, RFC 1122 §3.2.1.3',
    never: true,
  },
  { cidr: '10.0.0.0/8', label: 'a private address', source: 'RFC 1918' },
  { cidr: '100.64.0.0/10', label: 'a shared (carrier-grade NAT) address', source: 'RFC 6598' },
  { cidr: '127.0.0.0/8', label: 'a loopback address', source: 'RFC 1122 §3.2.1.3' },
  // 169.254.169.254 is the metadata service of AWS, GCP, Azure and others.
  { cidr: '169.254.0.0/16', label: 'a link-local address (cloud metadata services live here)', source: 'RFC 3927' },
  { cidr: '172.16.0.0/12', label: 'a private address', source: 'RFC 1918' },
  // Holds 192.0.0.192, Oracle Cloud's metadata service, and NAT64/DS-Lite infrastructure.
  { cidr: '192.0.0.0/24', label: 'an IETF protocol assignment', source: 'RFC 6890 §2.1' },
  { cidr: '192.0.2.0/24', label: 'a documentation address (TEST-NET-1)', source: 'RFC 5737' },
  { cidr: '192.88.99.0/24', label: 'a 6to4 relay anycast address (deprecated)', source: 'RFC 7526' },
  { cidr: '192.168.0.0/16', label: 'a private address', source: 'RFC 1918' },
  { cidr: '198.18.0.0/15', label: 'a benchmarking address', source: 'RFC 2544' },
  { cidr: '198.51.100.0/24', label: 'a documentation address (TEST-NET-2)', source: 'RFC 5737' },
  { cidr: '203.0.113.0/24', label: 'a documentation address (TEST-NET-3)', source: 'RFC 5737' },
  { cidr: '224.0.0.0/4', label: 'a multicast address', source: 'RFC 5771', never: true },
  { cidr: '255.255.255.255/32', label: 'the limited broadcast address', source: 'RFC 919, RFC 8190', never: true },
  { cidr: '240.0.0.0/4', label: 'a reserved address', source: 'RFC 1112 §4' },
];

export const IPV6_RANGES: readonly SpecialRange[] = [
  {
    cidr: '::/128',
    label: 'the unspecified address, which reaches this host',
    source: 'RFC 4291 §2.5.2',
    never: true,
  },
  { cidr: '::1/128', label: 'the loopback address', source: 'RFC 4291 §2.5.3' },
  // checkDestination turns these into their IPv4 address before it gets here; kept so that
  // classify() is right on its own.
  { cidr: '::ffff:0:0/96', label: 'an IPv4-mapped address', source: 'RFC 4291 §2.5.5.2', embeds: low32 },
  {
    cidr: '::/96',
    label: 'an IPv4-compatible address (deprecated)',
    source: 'RFC 4291 §2.5.5.1',
    embeds: low32,
    alwaysRefuse: true,
  },
  // The well-known prefix: a DNS64 resolver answers with it on IPv6-only networks, so a public
  // embedded address must pass. RFC 6052 §3.1 forbids it for non-global IPv4; we check anyway.
  { cidr: '64:ff9b::/96', label: 'a NAT64 address', source: 'RFC 6052', embeds: low32 },
  // Local-use NAT64 prefixes are chosen by each network, and so is where the IPv4 address sits
  // inside them (RFC 6052 §2.2): it cannot be found, so the whole block is refused.
  { cidr: '64:ff9b:1::/48', label: 'a local-use NAT64 address', source: 'RFC 8215' },
  { cidr: '100::/64', label: 'a discard-only address', source: 'RFC 6666' },
  // The client address inside a Teredo address is obfuscated and the server's is a relay: the
  // real destination cannot be checked.
  { cidr: '2001::/32', label: 'a Teredo tunnel address, whose real destination cannot be checked', source: 'RFC 4380' },
  { cidr: '2001:2::/48', label: 'a benchmarking address', source: 'RFC 5180' },
  { cidr: '2001::/23', label: 'an IETF protocol assignment', source: 'RFC 2928, RFC 6890' },
  { cidr: '2001:db8::/32', label: 'a documentation address', source: 'RFC 3849' },
  // 2002:AABB:CCDD::/48 is the 6to4 site of IPv4 AA.BB.CC.DD: a relay forwards to that address.
  { cidr: '2002::/16', label: 'a 6to4 address', source: 'RFC 3056', embeds: (value) => low32(value >> 80n) },
  { cidr: '3fff::/20', label: 'a documentation address', source: 'RFC 9637' },
  // AWS's IPv6 metadata service (fd00:ec2::254) is in here.
  { cidr: 'fc00::/7', label: 'a unique local address', source: 'RFC 4193' },
  { cidr: 'fe80::/10', label: 'a link-local address', source: 'RFC 4291 §2.5.6' },
  { cidr: 'fec0::/10', label: 'a site-local address (deprecated)', source: 'RFC 3879' },
  { cidr: 'ff00::/8', label: 'a multicast address', source: 'RFC 4291 §2.7', never: true },
];

/**
 * Everything outside 2000::/3 that no row above names: the rest of the space is reserved by the
 * IETF or unassigned, so nothing legitimate answers there.
 */
export const IPV6_GLOBAL_UNICAST: SpecialRange = {
  cidr: '2000::/3',
  label: 'an address outside the global unicast space 2000::/3',
  source: 'RFC 4291 §2.4, IANA IPv6 Address Space',
  outside: true,
};

/** Why an address is refused. */
export interface Verdict {
  readonly range: SpecialRange;
  /** For an IPv6 form carrying an IPv4 address: that address, and its own verdict if it has one. */
  readonly embedded?: { readonly address: string; readonly verdict: Verdict | undefined };
}

type Compiled = readonly (readonly [Cidr, SpecialRange])[];

const compile = (ranges: readonly SpecialRange[]): Compiled =>
  ranges.map((range) => {
    const cidr = parseCidr(range.cidr);
    if (typeof cidr === 'string') throw new Error(`ranges.ts: ${cidr}`);
    return [cidr, range] as const;
  });

const V4 = compile(IPV4_RANGES);
const V6 = compile(IPV6_RANGES);
const GLOBAL_UNICAST = compile([IPV6_GLOBAL_UNICAST])[0]![0];

/** The reason to refuse `ip`, or `undefined` for an address on the public Internet. */
export function classify(ip: IpAddress): Verdict | undefined {
  if (ip.family === 4) {
    const hit = V4.find(([cidr]) => inCidr(ip, cidr));
    return hit && { range: hit[1] };
  }
  const hit = V6.find(([cidr]) => inCidr(ip, cidr));
  if (hit === undefined) {
    return inCidr(ip, GLOBAL_UNICAST) ? undefined : { range: IPV6_GLOBAL_UNICAST };
  }
  const range = hit[1];
  if (range.embeds === undefined) return { range };
  const inner = range.embeds(ip.value);
  const verdict = classify({ family: 4, value: inner });
  if (verdict === undefined && !range.alwaysRefuse) return undefined;
  return { range, embedded: { address: formatIpv4(inner), verdict } };
}
