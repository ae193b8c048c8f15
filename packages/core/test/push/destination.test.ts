import { describe, expect, it } from 'vitest';
import { A2AError } from '../../src/errors.js';
import { ERROR_TABLE_1_0, restError1_0 } from '../../src/protocol/v1_0/errors.js';
import {
  type CheckedDestination,
  checkDestination,
  type DestinationPolicy,
  isCheckedDestination,
} from '../../src/push/webhook.js';
import { noResolver, tableResolver } from './helpers.js';

async function refusal(url: string, policy: DestinationPolicy = {}): Promise<A2AError> {
  let result: CheckedDestination;
  try {
    result = await checkDestination(url, policy);
  } catch (error) {
    if (A2AError.is(error)) return error;
    throw error;
  }
  throw new Error(`expected ${url} to be refused, got ${JSON.stringify(result.addresses)}`);
}

const data = (error: A2AError): Record<string, unknown> => error.data as Record<string, unknown>;

/** Each forbidden address, the range it must be refused as, and words its message must hold. */
const FORBIDDEN: readonly (readonly [address: string, range: string, words: string])[] = [
  // IPv4
  ['0.0.0.0', '0.0.0.0/8', 'reaches this host'],
  ['0.1.2.3', '0.0.0.0/8', 'RFC 1122'],
  ['10.0.0.5', '10.0.0.0/8', 'a private address (RFC 1918)'],
  ['10.255.255.255', '10.0.0.0/8', 'RFC 1918'],
  ['100.64.0.1', '100.64.0.0/10', 'carrier-grade NAT'],
  ['100.100.100.200', '100.64.0.0/10', 'RFC 6598'],
  ['100.127.255.255', '100.64.0.0/10', 'RFC 6598'],
  ['127.0.0.1', '127.0.0.0/8', 'a loopback address'],
  ['127.255.255.254', '127.0.0.0/8', 'loopback'],
  ['169.254.169.254', '169.254.0.0/16', 'cloud metadata'],
  ['169.254.0.1', '169.254.0.0/16', 'RFC 3927'],
  ['172.16.0.1', '172.16.0.0/12', 'RFC 1918'],
  ['172.31.255.255', '172.16.0.0/12', 'RFC 1918'],
  ['192.0.0.8', '192.0.0.0/24', 'RFC 6890'],
  ['192.0.0.192', '192.0.0.0/24', 'IETF protocol assignment'],
  ['192.0.2.1', '192.0.2.0/24', 'TEST-NET-1'],
  ['192.88.99.1', '192.88.99.0/24', 'RFC 7526'],
  ['192.168.1.1', '192.168.0.0/16', 'RFC 1918'],
  ['198.18.0.1', '198.18.0.0/15', 'benchmarking'],
  ['198.19.255.255', '198.18.0.0/15', 'RFC 2544'],
  ['198.51.100.7', '198.51.100.0/24', 'TEST-NET-2'],
  ['203.0.113.9', '203.0.113.0/24', 'TEST-NET-3'],
  ['224.0.0.1', '224.0.0.0/4', 'multicast'],
  ['239.255.255.250', '224.0.0.0/4', 'RFC 5771'],
  ['240.0.0.1', '240.0.0.0/4', 'reserved'],
  ['254.1.2.3', '240.0.0.0/4', 'RFC 1112'],
  ['255.255.255.255', '255.255.255.255/32', 'limited broadcast'],
  // IPv6
  ['::', '::/128', 'unspecified'],
  ['::1', '::1/128', 'loopback'],
  ['::ffff:127.0.0.1', '127.0.0.0/8', 'the IPv4-mapped form (RFC 4291 §2.5.5.2) of 127.0.0.1, a loopback address'],
  ['::ffff:7f00:1', '127.0.0.0/8', 'IPv4-mapped'],
  ['::ffff:10.0.0.5', '10.0.0.0/8', 'RFC 1918'],
  ['::ffff:169.254.169.254', '169.254.0.0/16', 'cloud metadata'],
  ['::127.0.0.1', '::/96', 'IPv4-compatible address (deprecated) (RFC 4291 §2.5.5.1) embedding 127.0.0.1'],
  ['::8.8.8.8', '::/96', 'embedding 8.8.8.8'],
  ['::2', '::/96', 'IPv4-compatible'],
  ['64:ff9b::10.0.0.5', '64:ff9b::/96', 'a NAT64 address (RFC 6052) embedding 10.0.0.5, a private address (RFC 1918)'],
  ['64:ff9b::7f00:1', '64:ff9b::/96', 'embedding 127.0.0.1, a loopback address'],
  ['64:ff9b::a9fe:a9fe', '64:ff9b::/96', 'embedding 169.254.169.254'],
  ['64:ff9b:1::1', '64:ff9b:1::/48', 'RFC 8215'],
  ['64:ff9b:1:ffff::5db8:d822', '64:ff9b:1::/48', 'local-use NAT64'],
  ['100::1', '100::/64', 'discard-only'],
  ['2001::1', '2001::/32', 'Teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', '2001::/32', 'RFC 4380'],
  ['2001:2::1', '2001:2::/48', 'benchmarking'],
  ['2001:10::1', '2001::/23', 'IETF protocol assignment'],
  ['2001:1ff::1', '2001::/23', 'RFC 2928'],
  ['2001:db8::1', '2001:db8::/32', 'documentation'],
  ['2002:7f00:1::1', '2002::/16', 'a 6to4 address (RFC 3056) embedding 127.0.0.1, a loopback address'],
  ['2002:a00:5::', '2002::/16', 'embedding 10.0.0.5'],
  ['2002:c0a8:101:1::1', '2002::/16', 'embedding 192.168.1.1'],
  ['3fff::1', '3fff::/20', 'RFC 9637'],
  ['3fff:fff::1', '3fff::/20', 'documentation'],
  ['fc00::1', 'fc00::/7', 'unique local'],
  ['fd00:ec2::254', 'fc00::/7', 'RFC 4193'],
  ['fe80::1', 'fe80::/10', 'link-local'],
  ['febf:ffff::1', 'fe80::/10', 'RFC 4291 §2.5.6'],
  ['fec0::1', 'fec0::/10', 'site-local'],
  ['feff::1', 'fec0::/10', 'RFC 3879'],
  ['ff02::1', 'ff00::/8', 'multicast'],
  ['ff0e::1', 'ff00::/8', 'RFC 4291 §2.7'],
  ['4000::1', 'outside 2000::/3', 'outside the global unicast space'],
  ['5f00::1', 'outside 2000::/3', 'RFC 4291 §2.4'],
  ['1234::1', 'outside 2000::/3', 'global unicast'],
];

/** Public addresses that must pass, each with the address that would be dialled. */
const PUBLIC: readonly (readonly [answer: string, dialled: string])[] = [
  ['93.184.216.34', '93.184.216.34'],
  ['8.8.8.8', '8.8.8.8'],
  ['1.1.1.1', '1.1.1.1'],
  ['9.255.255.255', '9.255.255.255'],
  ['11.0.0.0', '11.0.0.0'],
  ['100.63.255.255', '100.63.255.255'],
  ['100.128.0.0', '100.128.0.0'],
  ['126.255.255.255', '126.255.255.255'],
  ['128.0.0.0', '128.0.0.0'],
  ['169.253.255.255', '169.253.255.255'],
  ['172.15.255.255', '172.15.255.255'],
  ['172.32.0.0', '172.32.0.0'],
  ['192.0.1.1', '192.0.1.1'],
  ['192.167.255.255', '192.167.255.255'],
  ['192.169.0.0', '192.169.0.0'],
  ['198.17.255.255', '198.17.255.255'],
  ['198.20.0.0', '198.20.0.0'],
  ['223.255.255.255', '223.255.255.255'],
  ['2606:2800:220:1:248:1893:25c8:1946', '2606:2800:220:1:248:1893:25c8:1946'],
  ['2001:4860:4860::8888', '2001:4860:4860::8888'],
  ['2001:200::1', '2001:200::1'],
  ['2A00:1450:4001:830::200E', '2a00:1450:4001:830::200e'],
  // The IPv4-mapped form is dialled as the IPv4 address it carries.
  ['::ffff:93.184.216.34', '93.184.216.34'],
  // DNS64 answers on IPv6-only networks: a public IPv4 address inside the well-known prefix passes.
  ['64:ff9b::5db8:d822', '64:ff9b::5db8:d822'],
  ['2002:5db8:d822::1', '2002:5db8:d822::1'],
];

describe('checkDestination: refused ranges', () => {
  it.each(FORBIDDEN)('a host resolving to %s is refused as %s', async (address, range, words) => {
    const resolver = tableResolver({ 'hooks.example.com': [address] });
    const error = await refusal('https://hooks.example.com/a2a', { resolver });
    expect(error.code).toBe('PUSH_URL_REFUSED');
    expect(data(error)).toMatchObject({ reason: 'address', host: 'hooks.example.com', address, range });
    expect(error.message).toContain(`the host hooks.example.com resolves to ${address},`);
    expect(error.message).toContain(words);
    expect(resolver.calls).toEqual(['hooks.example.com']);
  });

  it.each(FORBIDDEN)('the literal %s in the URL is refused as %s, without DNS', async (address, range, words) => {
    const host = address.includes(':') ? `[${address}]` : address;
    const error = await refusal(`http://${host}:8080/hook`, { resolver: noResolver });
    expect(error.code).toBe('PUSH_URL_REFUSED');
    expect(data(error)).toMatchObject({ reason: 'address', range });
    expect(error.message).toContain(words);
  });

  it.each(PUBLIC)('a host resolving to %s passes, to be dialled at %s', async (answer, dialled) => {
    const resolver = tableResolver({ 'hooks.example.com': [answer] });
    const checked = await checkDestination('https://hooks.example.com/a2a', { resolver });
    expect(checked.addresses).toEqual([
      { address: dialled, family: dialled.includes(':') ? 6 : 4, allowedBy: 'public' },
    ]);
  });

  it('says what was refused, why, and how to allow it', async () => {
    const resolver = tableResolver({ 'hooks.example.com': ['10.0.0.5'] });
    const error = await refusal('https://hooks.example.com/a2a', { resolver });
    expect(error.message).toBe(
      'Push notification URL refused: the host hooks.example.com resolves to 10.0.0.5, a private address (RFC 1918); allow it with allowCidrs (e.g. "10.0.0.5/32") if the receiver is trusted.',
    );
    const v6 = await refusal('https://[fd00::5]/a2a');
    expect(v6.message).toBe(
      'Push notification URL refused: the host [fd00::5] is a unique local address (RFC 4193); allow it with allowCidrs (e.g. "fd00::5/128") if the receiver is trusted.',
    );
  });

  it('is an invalid-params error the client is shown (JSON-RPC -32602, HTTP 400; 1.0: INVALID_ARGUMENT)', async () => {
    const error = await refusal('http://127.0.0.1/');
    expect(error).toBeInstanceOf(A2AError);
    expect(error.jsonRpcCode).toBe(-32602);
    expect(error.httpStatus).toBe(400);
    expect(error.exposed).toBe(true);
    expect(ERROR_TABLE_1_0.PUSH_URL_REFUSED).toEqual({
      status: 'INVALID_ARGUMENT',
      http: 400,
      reason: 'INVALID_PARAMS',
    });
    const { status, body } = restError1_0(error);
    expect(status).toBe(400);
    expect(JSON.stringify(body)).toContain('"range":"127.0.0.0/8"');
  });

  it('refuses a host when any one of its addresses is forbidden', async () => {
    const resolver = tableResolver({
      'mixed.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '10.0.0.5'],
      'mixed6.example.com': ['2606:2800:220:1:248:1893:25c8:1946', 'fe80::1%eth0'],
    });
    expect(data(await refusal('https://mixed.example.com/', { resolver }))).toMatchObject({ address: '10.0.0.5' });
    expect(data(await refusal('https://mixed6.example.com/', { resolver }))).toMatchObject({
      address: 'fe80::1%eth0',
      range: 'fe80::/10',
    });
  });

  it('keeps every address of a public host, in the resolver order', async () => {
    const resolver = tableResolver({ 'dual.example.com': ['2606:2800:220:1:248:1893:25c8:1946', '93.184.216.34'] });
    const checked = await checkDestination('https://dual.example.com/', { resolver });
    expect(checked.addresses.map((a) => a.address)).toEqual(['2606:2800:220:1:248:1893:25c8:1946', '93.184.216.34']);
  });
});

describe('checkDestination: IPv4 spellings that URL parsing normalises', () => {
  it.each([
    'http://2130706433/',
    'http://0x7f.1/',
    'http://127.1/',
    'http://0177.0.0.1/',
    'http://0x7f000001/',
    'http://127.0.0.1./',
    'http://%31%32%37.0.0.1/',
    'http://\uff11\uff12\uff17.0.0.1/',
    'http://0x7F.0.0.0x1/',
    'http://[::ffff:127.0.0.1]/',
    'http://[0:0:0:0:0:ffff:7f00:1]/',
  ])('%s is loopback and refused without DNS', async (url) => {
    const error = await refusal(url, { resolver: noResolver });
    expect(data(error)).toMatchObject({ reason: 'address', range: '127.0.0.0/8' });
  });

  it.each(['http://0/', 'http://0.0.0.0/', 'http://[::]/', 'http://[0:0::0]/'])(
    '%s (this host) is refused without DNS',
    async (url) => {
      const error = await refusal(url, { resolver: noResolver });
      expect(data(error).range).toMatch(/^(0\.0\.0\.0\/8|::\/128)$/);
    },
  );

  it('http://169.254.169.254/ and its decimal form 2852039166 are the metadata service', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://2852039166/',
      'http://0xa9.0xfe.0xa9.0xfe/',
    ]) {
      expect(data(await refusal(url, { resolver: noResolver }))).toMatchObject({ range: '169.254.0.0/16' });
    }
  });

  it('resolves localhost with the default resolver (dns.lookup) and refuses it', async () => {
    const error = await refusal('http://localhost:3000/hook');
    expect(data(error)).toMatchObject({ reason: 'address', host: 'localhost' });
    expect(['127.0.0.0/8', '::1/128']).toContain(data(error).range);
  });

  it('passes the resolver the normalised host name', async () => {
    const resolver = tableResolver({
      'hooks.example.com': ['93.184.216.34'],
      'xn--bcher-kva.example': ['93.184.216.34'],
    });
    await checkDestination('https://HOOKS.Example.COM/', { resolver });
    await checkDestination('https://b\u00fccher.example/', { resolver });
    expect(resolver.calls).toEqual(['hooks.example.com', 'xn--bcher-kva.example']);
  });
});

describe('checkDestination: URL rules', () => {
  it.each([
    'ftp://hooks.example.com/',
    'file:///etc/passwd',
    'gopher://hooks.example.com/',
    'ws://hooks.example.com/',
    'data:,x',
  ])('%s: only http: and https:', async (url) => {
    const error = await refusal(url, { resolver: noResolver });
    expect(data(error).reason).toBe('scheme');
    expect(error.message).toContain('use an https: (or http:) URL');
  });

  it.each([
    'https://user:s3cret@hooks.example.com/',
    'https://user@hooks.example.com/',
    'https://:s3cret@hooks.example.com/',
  ])('%s: no credentials in the URL, and they are not echoed', async (url) => {
    const error = await refusal(url, { resolver: noResolver });
    expect(data(error).reason).toBe('credentials');
    expect(error.message).not.toContain('s3cret');
    expect(JSON.stringify(error.data)).not.toContain('s3cret');
  });

  it.each(['not a url', '/relative/path', 'https://', 'http://[::1/', 'http://exa mple.com/?token=s3cret'])(
    '%s: not a URL, and not echoed',
    async (url) => {
      const error = await refusal(url, { resolver: noResolver });
      expect(data(error).reason).toBe('invalid-url');
      expect(error.message).not.toContain('s3cret');
    },
  );

  it('keeps the port, path and query, and drops the fragment', async () => {
    const resolver = tableResolver({ 'hooks.example.com': ['93.184.216.34'] });
    const checked = await checkDestination('https://hooks.example.com:8443/a2a/push?tenant=7#x', { resolver });
    expect(checked).toMatchObject({
      protocol: 'https:',
      hostname: 'hooks.example.com',
      isIpLiteral: false,
      port: 8443,
      hostHeader: 'hooks.example.com:8443',
      path: '/a2a/push?tenant=7',
    });
    const plain = await checkDestination('http://hooks.example.com/', { resolver });
    expect(plain).toMatchObject({ port: 80, hostHeader: 'hooks.example.com', path: '/' });
    const literal = await checkDestination('https://[2606:2800:220:1:248:1893:25c8:1946]/', { resolver: noResolver });
    expect(literal).toMatchObject({
      hostname: '2606:2800:220:1:248:1893:25c8:1946',
      isIpLiteral: true,
      port: 443,
      hostHeader: '[2606:2800:220:1:248:1893:25c8:1946]',
    });
  });

  it('accepts a URL object', async () => {
    const checked = await checkDestination(new URL('https://93.184.216.34/x'), { resolver: noResolver });
    expect(checked.addresses).toEqual([{ address: '93.184.216.34', family: 4, allowedBy: 'public' }]);
  });

  it('refuses a host that does not resolve, naming the DNS error (retryable at delivery)', async () => {
    const resolver = tableResolver({ 'empty.example.com': [] });
    const missing = await refusal('https://nowhere.example.com/', { resolver });
    expect(data(missing)).toEqual({ reason: 'unresolvable', host: 'nowhere.example.com', dnsCode: 'ENOTFOUND' });
    expect(missing.message).toContain('does not resolve (ENOTFOUND)');
    expect(missing.cause).toBeInstanceOf(Error);
    expect(data(await refusal('https://empty.example.com/', { resolver }))).toMatchObject({ reason: 'unresolvable' });
  });

  it('refuses a resolver answer that is not a plain IP address', async () => {
    for (const answer of ['127.1', '0x7f.0.0.1', 'localhost', '010.0.0.1', '1.2.3.4 ', '']) {
      const resolver = tableResolver({ 'odd.example.com': [answer] });
      const error = await refusal('https://odd.example.com/', { resolver });
      expect(data(error)).toMatchObject({ reason: 'not-an-address', address: answer });
    }
  });

  it('returns a frozen destination that only checkDestination can make', async () => {
    const checked = await checkDestination('https://93.184.216.34/', { resolver: noResolver });
    expect(isCheckedDestination(checked)).toBe(true);
    expect(Object.isFrozen(checked)).toBe(true);
    expect(Object.isFrozen(checked.addresses)).toBe(true);
    expect(Object.isFrozen(checked.addresses[0])).toBe(true);
    expect(isCheckedDestination({ ...checked })).toBe(false);
    expect(isCheckedDestination(null)).toBe(false);
  });
});

describe('checkDestination: allow-lists', () => {
  const resolver = tableResolver({
    'hooks.internal': ['10.0.0.5'],
    'sub.hooks.internal': ['10.0.0.6'],
    'hooks.internal.': ['10.0.0.5'],
    'mixed.internal': ['10.0.0.5', '192.168.1.1'],
    'zero.internal': ['0.0.0.0'],
    'multicast.internal': ['10.0.0.5', '224.0.0.1'],
    'mapped.internal': ['::ffff:10.0.0.5'],
    'nat64.internal': ['64:ff9b::a00:5'],
    'ula.internal': ['fd00:ec2::254'],
  });

  it('allowHosts lets a named host through, still resolving it', async () => {
    resolver.calls.length = 0;
    const checked = await checkDestination('https://hooks.internal/a2a', { resolver, allowHosts: ['hooks.internal'] });
    expect(checked.addresses).toEqual([{ address: '10.0.0.5', family: 4, allowedBy: 'allowHosts' }]);
    expect(resolver.calls).toEqual(['hooks.internal']);
  });

  it('allowHosts is case-insensitive and exact: no subdomains, and the root-dot name is another name', async () => {
    const policy = { resolver, allowHosts: ['Hooks.Internal'] };
    await expect(checkDestination('https://HOOKS.internal/', policy)).resolves.toBeTruthy();
    expect(data(await refusal('https://sub.hooks.internal/', policy))).toMatchObject({ address: '10.0.0.6' });
    expect(data(await refusal('https://hooks.internal./', policy))).toMatchObject({ address: '10.0.0.5' });
  });

  it('allowHosts with a port allows only that port (the scheme default counts)', async () => {
    const policy = { resolver, allowHosts: ['hooks.internal:8443'] };
    await expect(checkDestination('https://hooks.internal:8443/', policy)).resolves.toBeTruthy();
    await refusal('https://hooks.internal/', policy);
    await refusal('http://hooks.internal:8080/', policy);
    await expect(
      checkDestination('https://hooks.internal/', { resolver, allowHosts: ['hooks.internal:443'] }),
    ).resolves.toBeTruthy();
    await expect(
      checkDestination('http://[fd00::1]:9000/', { resolver: noResolver, allowHosts: ['[FD00::1]:9000'] }),
    ).resolves.toMatchObject({ addresses: [{ address: 'fd00::1', allowedBy: 'allowHosts' }] });
  });

  it('allowCidrs lets an address through; every other address must still pass', async () => {
    const checked = await checkDestination('https://hooks.internal/', { resolver, allowCidrs: ['10.0.0.0/8'] });
    expect(checked.addresses).toEqual([{ address: '10.0.0.5', family: 4, allowedBy: 'allowCidrs' }]);
    const error = await refusal('https://mixed.internal/', { resolver, allowCidrs: ['10.0.0.0/8'] });
    expect(data(error)).toMatchObject({ address: '192.168.1.1' });
    await refusal('https://hooks.internal/', { resolver, allowCidrs: ['10.0.0.6/32'] });
    await expect(
      checkDestination('https://hooks.internal/', { resolver, allowCidrs: ['10.0.0.5'] }),
    ).resolves.toBeTruthy();
    await expect(
      checkDestination('https://ula.internal/', { resolver, allowCidrs: ['fd00::/8'] }),
    ).resolves.toMatchObject({
      addresses: [{ address: 'fd00:ec2::254', family: 6, allowedBy: 'allowCidrs' }],
    });
  });

  it('keeps the zone of an allowed link-local answer, which it needs to be dialled', async () => {
    const zoned = tableResolver({ 'printer.local': ['fe80::1%eth0'] });
    await expect(
      checkDestination('http://printer.local/', { resolver: zoned, allowCidrs: ['fe80::/10'] }),
    ).resolves.toMatchObject({
      addresses: [{ address: 'fe80::1%eth0', family: 6, allowedBy: 'allowCidrs' }],
    });
  });

  it('an IPv4-mapped answer is allowed by its IPv4 block and dialled as IPv4; NAT64 is not', async () => {
    const policy = { resolver, allowCidrs: ['10.0.0.0/8'] };
    await expect(checkDestination('https://mapped.internal/', policy)).resolves.toMatchObject({
      addresses: [{ address: '10.0.0.5', family: 4, allowedBy: 'allowCidrs' }],
    });
    // A NAT64 gateway is another machine: allowing 10/8 does not allow a path through it.
    expect(data(await refusal('https://nat64.internal/', policy))).toMatchObject({ range: '64:ff9b::/96' });
  });

  it('no allow-list lets through unspecified, multicast or broadcast addresses', async () => {
    const everything = { resolver, allowCidrs: ['0.0.0.0/0', '::/0'] };
    for (const url of [
      'http://0.0.0.0/',
      'http://[::]/',
      'http://224.0.0.1/',
      'http://255.255.255.255/',
      'http://[ff02::1]/',
    ]) {
      const error = await refusal(url, everything);
      expect(error.message).toContain('no webhook receiver can be there, and allow-lists do not change that');
    }
    await refusal('https://zero.internal/', { resolver, allowHosts: ['zero.internal'] });
    await refusal('https://multicast.internal/', { resolver, allowHosts: ['multicast.internal'] });
    // while 0.0.0.0/0 does allow everything else
    await expect(checkDestination('http://127.0.0.1/', everything)).resolves.toBeTruthy();
  });

  it.each([
    [{ allowCidrs: ['10.0.0.1/8'] }, 'did you mean "10.0.0.0/8"?'],
    [{ allowCidrs: ['10.0.0.0/33'] }, 'use 0 to 32'],
    [{ allowCidrs: ['fd00::/129'] }, 'use 0 to 128'],
    [{ allowCidrs: ['10.0.0.0/08'] }, 'invalid prefix length'],
    [{ allowCidrs: ['banana'] }, 'is not a CIDR block'],
    [{ allowCidrs: ['10.0.0/8'] }, 'is not a CIDR block'],
    [{ allowCidrs: ['fe80::1%eth0/128'] }, 'is not a CIDR block'],
    [{ allowCidrs: ['::ffff:10.0.0.0/104'] }, 'write the IPv4 block "10.0.0.0/8"'],
    [{ allowHosts: ['https://hooks.internal/'] }, 'not a host name with an optional port'],
    [{ allowHosts: ['hooks.internal/x'] }, 'not a host name'],
    [{ allowHosts: ['user@hooks.internal'] }, 'not a host name'],
    [{ allowHosts: ['fd00::1'] }, 'in brackets'],
    [{ allowHosts: ['hooks.internal:70000'] }, 'port outside 1-65535'],
    [{ allowHosts: [42 as unknown as string] }, 'host names (strings)'],
    [{ resolver: 'dns' as unknown as DestinationPolicy['resolver'] }, 'resolver must be a function'],
  ] as const)('a bad policy %j is INVALID_OPTIONS: %s', async (policy, words) => {
    const error = await refusal('https://93.184.216.34/', policy as DestinationPolicy);
    expect(error.code).toBe('INVALID_OPTIONS');
    expect(error.message).toContain(words);
  });
});
