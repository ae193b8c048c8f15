/**
 * Where a push notification may be sent: the destination policy, applied when a client registers a
 * webhook URL and again before every delivery (DNS answers change between the two).
 *
 * The check resolves the host once and returns the addresses it checked; delivery connects to one
 * of those and never resolves again, so a name that answers with a public address to the check and
 * a private one a moment later (DNS rebinding) still only reaches the public one.
 */

import { lookup } from 'node:dns/promises';
import { A2AError } from '../errors.js';
import { type Cidr, formatIp, type IpAddress, inCidr, ipv4Mapped, parseCidr, parseIp } from './ip.js';
import { classify, type Verdict } from './ranges.js';

/** One answer of a {@link Resolver}. Only `address` is used: the family is read from it. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family?: number;
}

/** Resolves a host name to every address it has, in the order a connection should try them. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export interface DestinationPolicy {
  /**
   * Host names whose addresses skip the range check, for trusted internal receivers. Exact names,
   * compared case-insensitively after URL normalisation (IDN to punycode, IPv6 in brackets); with
   * a port (`hooks.internal:8443`) only that port, else any port. No wildcards; `hooks.internal.`
   * (with the root dot) is another name. The host is still resolved, and unicast only: an
   * unspecified, multicast or broadcast answer is refused anyway.
   * @default []
   */
  readonly allowHosts?: readonly string[];
  /**
   * Address blocks that pass the range check (`10.1.0.0/16`, `fd00:1::/64`, or one address). Host
   * bits must be zero. IPv4-mapped IPv6 addresses are checked as the IPv4 address they carry, so
   * write IPv4 blocks in IPv4.
   * @default []
   */
  readonly allowCidrs?: readonly string[];
  /**
   * Resolves host names. IP literals in the URL are never resolved.
   * @default dns.promises.lookup(hostname, { all: true, verbatim: true })
   */
  readonly resolver?: Resolver;
  /**
   * What refusals call the allow-list, so they name the option the user sets (the plugin's is
   * `pushAllowedCidrs`). @default 'allowCidrs'
   */
  readonly allowCidrsName?: string;
}

export interface CheckedAddress {
  /** The address to connect to (an IPv4-mapped IPv6 answer becomes its IPv4 address). */
  readonly address: string;
  readonly family: 4 | 6;
  /** Why it passed: not in any refused range, or let through by an allow-list. */
  readonly allowedBy: 'public' | 'allowHosts' | 'allowCidrs';
}

/**
 * A URL that passed {@link checkDestination}, with the addresses it was checked at. Frozen, and
 * only `checkDestination` makes them: `postJson` refuses any other object.
 */
export interface CheckedDestination {
  readonly protocol: 'http:' | 'https:';
  /** The URL's host name; an IPv6 literal without its brackets. */
  readonly hostname: string;
  /** Whether the URL's host is an IP literal (then there is no TLS server name to send). */
  readonly isIpLiteral: boolean;
  /** The port to connect to (the scheme's default when the URL has none). */
  readonly port: number;
  /** The `Host` header: the URL's host, with its port when not the default (RFC 9110 §7.2). */
  readonly hostHeader: string;
  /** Path and query of the request target (RFC 9112 §3.2.1, origin-form). The fragment is dropped. */
  readonly path: string;
  /** Every address of the host, each checked, in the resolver's order. Never empty. */
  readonly addresses: readonly CheckedAddress[];
}

const checked = new WeakSet<CheckedDestination>();

/** Whether `value` came from {@link checkDestination} (and so was not forged or edited). */
export function isCheckedDestination(value: unknown): value is CheckedDestination {
  return typeof value === 'object' && value !== null && checked.has(value as CheckedDestination);
}

const defaultResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

interface AllowHost {
  readonly hostname: string;
  readonly port: number | undefined;
}

interface CompiledPolicy {
  readonly hosts: readonly AllowHost[];
  readonly cidrs: readonly Cidr[];
  readonly resolver: Resolver;
}

function invalidPolicy(message: string): A2AError {
  return new A2AError('INVALID_OPTIONS', `Push destination policy: ${message}.`);
}

function compilePolicy(policy: DestinationPolicy): CompiledPolicy {
  const hosts = (policy.allowHosts ?? []).map((entry): AllowHost => {
    if (typeof entry !== 'string') throw invalidPolicy('allowHosts holds host names (strings)');
    // `host`, `host:port`, `[v6]` or `[v6]:port`. An IPv6 address without brackets would read as
    // host:port (`fd00::1` as `fd00:` port 1), so it is refused.
    const parts = entry.startsWith('[')
      ? /^(\[[^\]]*\])(?::([0-9]{1,5}))?$/.exec(entry)
      : /^([^:]*)(?::([0-9]{1,5}))?$/.exec(entry);
    let url: URL | undefined;
    try {
      url = parts ? new URL(`http://${parts[1]}/`) : undefined;
    } catch {
      url = undefined;
    }
    if (!url || url.username || url.password || url.pathname !== '/' || url.port || url.search || url.hash) {
      throw invalidPolicy(
        `allowHosts entry "${entry}" is not a host name with an optional port; write e.g. "hooks.internal" or "hooks.internal:8443" (an IPv6 address in brackets: "[fd00::1]:8443")`,
      );
    }
    const port = parts?.[2] === undefined ? undefined : Number(parts[2]);
    if (port !== undefined && (port < 1 || port > 65535)) {
      throw invalidPolicy(`allowHosts entry "${entry}" has a port outside 1-65535`);
    }
    return { hostname: url.hostname, port };
  });
  const cidrs = (policy.allowCidrs ?? []).map((entry): Cidr => {
    if (typeof entry !== 'string') throw invalidPolicy('allowCidrs holds CIDR blocks (strings)');
    const cidr = parseCidr(entry);
    if (typeof cidr === 'string') throw invalidPolicy(`allowCidrs: ${cidr}`);
    if (cidr.family === 6 && cidr.prefix >= 96 && cidr.network >> 32n === 0xffffn) {
      const v4 = ipv4Mapped({ family: 6, value: cidr.network })!;
      throw invalidPolicy(
        `allowCidrs entry "${entry}" is IPv4-mapped; write the IPv4 block "${formatIp(v4)}/${cidr.prefix - 96}" (mapped answers are checked as IPv4)`,
      );
    }
    return cidr;
  });
  const resolver = policy.resolver ?? defaultResolver;
  if (typeof resolver !== 'function')
    throw invalidPolicy('resolver must be a function (hostname) => Promise<{ address }[]>');
  return { hosts, cidrs, resolver };
}

function refused(message: string, data: Record<string, unknown>, cause?: unknown): A2AError {
  return new A2AError('PUSH_URL_REFUSED', `Push notification URL refused: ${message}`, { data, cause });
}

/** "a NAT64 address (RFC 6052) embedding 10.0.0.5, a private address (RFC 1918)" */
function describe(verdict: Verdict): string {
  const { range, embedded } = verdict;
  const own = `${range.label} (${range.source})`;
  if (embedded === undefined) return own;
  const inner = embedded.verdict ? `, ${describe(embedded.verdict)}` : '';
  return `${own} embedding ${embedded.address}${inner}`;
}

/**
 * Checks that `url` may receive push notifications, and returns where to connect.
 *
 * Refuses, with an `A2AError` of code `PUSH_URL_REFUSED` whose message says why and what to do:
 * a URL that does not parse; a scheme other than `http:`/`https:`; credentials in the URL; a host
 * that does not resolve (`data.reason: 'unresolvable'`, often temporary); and a host of which ANY
 * address is in a refused range (see `ranges.ts`) and not allowed by `policy`. A bad `policy`
 * throws `INVALID_OPTIONS`.
 */
export async function checkDestination(url: string | URL, policy: DestinationPolicy = {}): Promise<CheckedDestination> {
  const compiled = compilePolicy(policy);
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch (error) {
    // The URL itself is not echoed: webhook URLs often carry a secret in their path or query.
    throw refused(
      'it is not a valid absolute URL; give one such as "https://hooks.example.com/a2a".',
      {
        reason: 'invalid-url',
      },
      error,
    );
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw refused(`the scheme "${parsed.protocol}" is not allowed; use an https: (or http:) URL.`, {
      reason: 'scheme',
      scheme: parsed.protocol,
    });
  }
  const protocol = parsed.protocol;
  if (parsed.username !== '' || parsed.password !== '') {
    throw refused(
      'the URL carries credentials (user:password@host); remove them and send credentials through the push authentication settings instead.',
      { reason: 'credentials' },
    );
  }

  const bracketed = parsed.hostname.startsWith('[');
  const hostname = bracketed ? parsed.hostname.slice(1, -1) : parsed.hostname;
  const port = parsed.port === '' ? (protocol === 'https:' ? 443 : 80) : Number(parsed.port);
  const literal = parseIp(hostname);
  // WHATWG URL parsing has already turned every IPv4 spelling (2130706433, 0x7f.1, 127.1, 0177.0.0.1)
  // into dotted decimal; a host that is still not an address here is a name.
  const hostAllowed = compiled.hosts.some(
    (h) => h.hostname === parsed.hostname && (h.port === undefined || h.port === port),
  );

  let answers: readonly ResolvedAddress[];
  if (literal !== undefined) {
    answers = [{ address: hostname }];
  } else {
    try {
      answers = await compiled.resolver(hostname);
    } catch (error) {
      const code = (error as { code?: unknown } | null)?.code;
      throw refused(
        `the host ${hostname} does not resolve${typeof code === 'string' ? ` (${code})` : ''}; check the name, or retry if DNS is failing.`,
        { reason: 'unresolvable', host: hostname, ...(typeof code === 'string' ? { dnsCode: code } : {}) },
        error,
      );
    }
    if (!Array.isArray(answers) || answers.length === 0) {
      throw refused(`the host ${hostname} has no addresses; check the name.`, {
        reason: 'unresolvable',
        host: hostname,
      });
    }
  }

  const addresses: CheckedAddress[] = [];
  for (const answer of answers) {
    const text = typeof answer?.address === 'string' ? answer.address : String(answer?.address);
    const subject =
      literal !== undefined ? `the host ${parsed.hostname} is` : `the host ${hostname} resolves to ${text},`;
    const parsedIp = parseIp(text);
    if (parsedIp === undefined) {
      throw refused(`${subject} which is not an IP address (a resolver fault); check the resolver.`, {
        reason: 'not-an-address',
        host: hostname,
        address: text,
      });
    }
    // An IPv6 socket sends ::ffff:a.b.c.d to a.b.c.d (RFC 4291 §2.5.5.2): check and dial the IPv4 address.
    const mapped = ipv4Mapped(parsedIp);
    const ip: IpAddress = mapped ?? parsedIp;
    // A link-local answer needs its zone (`%eth0`) to be dialled; it only gets here if allowed.
    const zone = !mapped && text.includes('%') ? text.slice(text.indexOf('%')) : '';
    const address = `${formatIp(ip)}${zone}`;
    const verdict = classify(ip);
    if (verdict === undefined) {
      addresses.push({ address, family: ip.family, allowedBy: 'public' });
      continue;
    }
    const what = mapped
      ? `the IPv4-mapped form (RFC 4291 §2.5.5.2) of ${formatIp(ip)}, ${describe(verdict)}`
      : describe(verdict);
    const range = verdict.range.outside ? `outside ${verdict.range.cidr}` : verdict.range.cidr;
    const data = { reason: 'address', host: hostname, address: text, range, source: verdict.range.source };
    if (verdict.range.never) {
      throw refused(`${subject} ${what}; no webhook receiver can be there, and allow-lists do not change that.`, data);
    }
    if (hostAllowed) {
      addresses.push({ address, family: ip.family, allowedBy: 'allowHosts' });
      continue;
    }
    if (compiled.cidrs.some((cidr) => inCidr(ip, cidr))) {
      addresses.push({ address, family: ip.family, allowedBy: 'allowCidrs' });
      continue;
    }
    const block = `${formatIp(ip)}/${ip.family === 4 ? 32 : 128}`;
    const option = policy.allowCidrsName ?? 'allowCidrs';
    throw refused(`${subject} ${what}; allow it with ${option} (e.g. "${block}") if the receiver is trusted.`, data);
  }

  const destination: CheckedDestination = Object.freeze({
    protocol,
    hostname,
    isIpLiteral: literal !== undefined,
    port,
    hostHeader: parsed.host,
    path: `${parsed.pathname}${parsed.search}`,
    addresses: Object.freeze(addresses.map((a) => Object.freeze(a))),
  });
  checked.add(destination);
  return destination;
}
