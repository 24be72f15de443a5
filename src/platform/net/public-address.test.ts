import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AddressPolicy,
  type AddressVerdict,
  allowListEntryProblem,
  cachedResolver,
  checkPublicUrl,
  isPublicIp,
  type Resolver,
} from './public-address.ts';

// Every test resolves through a fixed table so nothing here touches DNS or the network.

type StubResolver = Resolver & { calls: string[] };

function stubResolver(table: Record<string, string[]>): StubResolver {
  const calls: string[] = [];
  const resolve = async (hostname: string): Promise<string[]> => {
    calls.push(hostname);
    const answer = table[hostname];
    if (answer === undefined) {
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    }
    return [...answer];
  };
  return Object.assign(resolve, { calls });
}

const STRICT: AddressPolicy = { allowPrivate: false };
const DEV: AddressPolicy = { allowPrivate: true };

function expectRefused(verdict: AddressVerdict, fragment?: string): string {
  if (verdict.ok)
    throw new Error(`expected a refusal, got ${verdict.url.href} -> ${verdict.addresses.join(', ')}`);
  // The reason is shown to a person as is, so it has to be a single sentence.
  expect(verdict.reason).toMatch(/^[A-Z][^\n]*\.$/);
  if (fragment !== undefined) expect(verdict.reason).toContain(fragment);
  return verdict.reason;
}

function expectAccepted(verdict: AddressVerdict): { url: URL; addresses: string[] } {
  if (!verdict.ok) throw new Error(`expected acceptance, got refusal: ${verdict.reason}`);
  return verdict;
}

const REFUSED_V4 = [
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', '0.0.0.0/8'],
  ['10.0.0.1', 'RFC 1918 10/8'],
  ['172.16.0.1', 'RFC 1918 172.16/12'],
  ['172.31.255.255', 'RFC 1918 172.16/12 top'],
  ['192.168.1.1', 'RFC 1918 192.168/16'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['100.127.255.254', 'carrier-grade NAT top'],
  ['169.254.0.1', 'link-local'],
  ['169.254.169.254', 'cloud metadata'],
  ['100.100.100.200', 'Alibaba metadata'],
  ['168.63.129.16', 'Azure host endpoint'],
  ['192.0.0.8', 'IETF protocol assignments 192.0.0.0/24'],
  ['192.0.2.10', 'TEST-NET-1'],
  ['198.18.0.1', 'benchmarking 198.18/15'],
  ['198.19.255.255', 'benchmarking 198.18/15 top'],
  ['198.51.100.7', 'TEST-NET-2'],
  ['203.0.113.9', 'TEST-NET-3'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast top'],
  ['240.0.0.1', 'reserved 240/4'],
  ['255.255.255.255', 'broadcast'],
] as const;

const REFUSED_V6 = [
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:10.0.0.1', 'IPv4-mapped RFC 1918'],
  ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
  ['fc00::1', 'unique local fc00::/8'],
  ['fd12:3456::1', 'unique local fd00::/8'],
  ['fd00:ec2::254', 'AWS metadata (unique local)'],
  ['fe80::1', 'link-local'],
  ['febf:ffff::1', 'link-local top'],
  ['ff02::1', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['2002:c0a8:101::1', '6to4'],
  ['2001:0:4136:e378::1', 'Teredo'],
  ['64:ff9b::a00:1', 'NAT64 wrapping 10.0.0.1'],
  ['64:ff9b::7f00:1', 'NAT64 wrapping 127.0.0.1'],
  ['64:ff9b:1::5db8:d70e', 'local-use NAT64'],
  ['::7f00:1', 'IPv4-compatible (outside 2000::/3)'],
  ['100::1', 'discard'],
  ['fec0::1', 'site-local'],
  ['4000::1', 'unallocated (outside 2000::/3)'],
] as const;

const PUBLIC_IPS = [
  '93.184.215.14',
  '8.8.8.8',
  '1.1.1.1',
  '2606:4700::1111',
  '2a00:1450:4001:82b::200e',
  '::ffff:93.184.215.14',
  '64:ff9b::5db8:d70e',
];

describe('isPublicIp', () => {
  it.each(PUBLIC_IPS)('accepts the public unicast address %s', (address) => {
    expect(isPublicIp(address)).toBe(true);
  });

  it.each([...REFUSED_V4, ...REFUSED_V6])('refuses %s (%s)', (address) => {
    expect(isPublicIp(address)).toBe(false);
  });

  it.each([
    '',
    'localhost',
    'example.com',
    '127.1',
    '0x7f.0.0.1',
    '2130706433',
    '010.0.0.1',
    '8.8.8.8.',
    ' 8.8.8.8',
    '8.8.8.8/32',
    '[2606:4700::1111]',
    'fe80::1%eth0',
    '2606:4700::1111%1',
  ])('refuses %j because it is not a plain address', (text) => {
    expect(isPublicIp(text)).toBe(false);
  });
});

describe('checkPublicUrl with IP literals', () => {
  it.each(REFUSED_V4)('refuses https://%s/ (%s) without resolving anything', async (address) => {
    const resolve = stubResolver({});
    expectRefused(await checkPublicUrl(`https://${address}/hook`, STRICT, resolve), address);
    expect(resolve.calls).toEqual([]);
  });

  it.each(REFUSED_V6)('refuses https://[%s]/ (%s) without resolving anything', async (address) => {
    const resolve = stubResolver({});
    expectRefused(await checkPublicUrl(`https://[${address}]/hook`, STRICT, resolve));
    expect(resolve.calls).toEqual([]);
  });

  it.each([
    ['127.1', '127.0.0.1'],
    ['0', '0.0.0.0'],
    ['017700000001', '127.0.0.1'],
    ['0x7f.0.0.1', '127.0.0.1'],
    ['2130706433', '127.0.0.1'],
    ['0x7f000001', '127.0.0.1'],
    ['0177.0.0.1', '127.0.0.1'],
    ['127.0.0.1.', '127.0.0.1'],
    ['10.1', '10.0.0.1'],
    ['0xa9.0xfe.0xa9.0xfe', '169.254.169.254'],
  ])('refuses the odd IPv4 spelling %s because it means %s', async (spelling, meaning) => {
    // The guarantee rests on WHATWG URL parsing turning the spelling into dotted decimal.
    expect(new URL(`https://${spelling}/`).hostname).toBe(meaning);
    const resolve = stubResolver({});
    expectRefused(await checkPublicUrl(`https://${spelling}/hook`, STRICT, resolve), meaning);
    expect(resolve.calls).toEqual([]);
  });

  it('accepts a public IPv4 literal and returns it as the address to connect to', async () => {
    const verdict = expectAccepted(
      await checkPublicUrl('https://93.184.215.14/hook', STRICT, stubResolver({})),
    );
    expect(verdict.addresses).toEqual(['93.184.215.14']);
    expect(verdict.url.href).toBe('https://93.184.215.14/hook');
  });

  it('accepts a public IPv6 literal and returns it without brackets', async () => {
    const verdict = expectAccepted(
      await checkPublicUrl('https://[2606:4700::1111]/x', STRICT, stubResolver({})),
    );
    expect(verdict.addresses).toEqual(['2606:4700::1111']);
    expect(verdict.url.hostname).toBe('[2606:4700::1111]');
  });

  it('reports a public IPv4-mapped literal as the IPv4 host it reaches', async () => {
    const verdict = expectAccepted(
      await checkPublicUrl('https://[::ffff:93.184.215.14]/x', STRICT, stubResolver({})),
    );
    expect(verdict.addresses).toEqual(['93.184.215.14']);
  });
});

describe('checkPublicUrl with host names', () => {
  it('accepts a name that resolves only to public addresses and returns them in resolver order', async () => {
    const resolve = stubResolver({ 'hooks.example.com': ['2606:4700::1111', '93.184.215.14'] });
    const verdict = expectAccepted(await checkPublicUrl('https://hooks.example.com/in', STRICT, resolve));
    expect(verdict.addresses).toEqual(['2606:4700::1111', '93.184.215.14']);
    expect(resolve.calls).toEqual(['hooks.example.com']);
  });

  it('accepts a name resolving to 93.184.215.14', async () => {
    const resolve = stubResolver({ 'example.com': ['93.184.215.14'] });
    const verdict = expectAccepted(await checkPublicUrl('https://example.com/hook', STRICT, resolve));
    expect(verdict.addresses).toEqual(['93.184.215.14']);
  });

  it('returns resolved addresses in normalised text without duplicates', async () => {
    const resolve = stubResolver({
      'example.com': ['2606:4700:0:0:0:0:0:1111', '2606:4700::1111', '93.184.215.14'],
    });
    const verdict = expectAccepted(await checkPublicUrl('https://example.com/', STRICT, resolve));
    expect(verdict.addresses).toEqual(['2606:4700::1111', '93.184.215.14']);
  });

  it('refuses a hostname that resolves to a private address', async () => {
    const resolve = stubResolver({ 'internal.example.com': ['10.0.0.5'] });
    const reason = expectRefused(
      await checkPublicUrl('https://internal.example.com/', STRICT, resolve),
      '10.0.0.5',
    );
    expect(reason).toContain('internal.example.com');
  });

  it.each([
    [['93.184.215.14', '192.168.0.10']],
    [['192.168.0.10', '93.184.215.14']],
    [['2606:4700::1111', '::1']],
  ])('refuses a hostname when any resolved address is private (%j)', async (answer) => {
    const resolve = stubResolver({ 'mixed.example.com': answer });
    expectRefused(await checkPublicUrl('https://mixed.example.com/', STRICT, resolve));
  });

  it.each([
    ['metadata.google.internal', '169.254.169.254'],
    ['instance-data.ec2.internal', 'fd00:ec2::254'],
    ['metadata.example.com', '::ffff:169.254.169.254'],
  ])(
    'refuses the metadata name %s by its address %s, even when private addresses are allowed',
    async (name, address) => {
      const resolve = stubResolver({ [name]: [address] });
      expectRefused(await checkPublicUrl(`https://${name}/latest/meta-data/`, STRICT, resolve));
      expectRefused(await checkPublicUrl(`http://${name}/latest/meta-data/`, DEV, resolve));
    },
  );

  it('refuses localhost when private addresses are not allowed', async () => {
    const resolve = stubResolver({ localhost: ['127.0.0.1', '::1'] });
    expectRefused(await checkPublicUrl('https://localhost/hook', STRICT, resolve), '127.0.0.1');
  });

  it('refuses with a sentence, never throwing, when the resolver rejects', async () => {
    const resolve = stubResolver({});
    const reason = expectRefused(
      await checkPublicUrl('https://nowhere.example/', STRICT, resolve),
      'nowhere.example',
    );
    expect(reason).toContain('ENOTFOUND');
  });

  it('refuses with a sentence, never throwing, when the resolver throws synchronously or rejects with a non-error', async () => {
    const throwing: Resolver = () => {
      throw new Error('resolver exploded');
    };
    expectRefused(await checkPublicUrl('https://example.com/', STRICT, throwing), 'could not be resolved');
    const rejecting: Resolver = () => Promise.reject('just a string');
    expectRefused(await checkPublicUrl('https://example.com/', STRICT, rejecting), 'could not be resolved');
  });

  it('refuses a hostname that resolves to no addresses', async () => {
    const resolve = stubResolver({ 'empty.example.com': [] });
    expectRefused(await checkPublicUrl('https://empty.example.com/', STRICT, resolve), 'does not resolve');
  });

  it('refuses a hostname when the resolver answers something that is not a plain IP address', async () => {
    for (const bad of ['not-an-ip', '127.1', 'fe80::1%eth0', '']) {
      const resolve = stubResolver({ 'odd.example.com': ['93.184.215.14', bad] });
      expectRefused(await checkPublicUrl('https://odd.example.com/', STRICT, resolve), 'not an IP address');
    }
  });
});

describe('checkPublicUrl URL rules', () => {
  const resolve = stubResolver({ 'example.com': ['93.184.215.14'] });

  it('refuses text that is not an absolute URL', async () => {
    for (const raw of ['', 'not a url', '/relative/path', 'https://', 'https://[::1/']) {
      expectRefused(await checkPublicUrl(raw, STRICT, resolve));
    }
  });

  it('refuses http unless private addresses are allowed', async () => {
    expectRefused(await checkPublicUrl('http://example.com/hook', STRICT, resolve), 'https');
    expectAccepted(await checkPublicUrl('http://example.com/hook', DEV, resolve));
  });

  it('refuses schemes other than https and http under every policy', async () => {
    for (const raw of [
      'ftp://example.com/',
      'file:///etc/passwd',
      'ws://example.com/',
      'gopher://example.com/',
    ]) {
      expectRefused(await checkPublicUrl(raw, STRICT, resolve));
      expectRefused(await checkPublicUrl(raw, DEV, resolve));
    }
  });

  it('refuses port 8443 only when port 443 is required', async () => {
    expectAccepted(await checkPublicUrl('https://example.com:8443/hook', STRICT, resolve));
    expectRefused(
      await checkPublicUrl(
        'https://example.com:8443/hook',
        { allowPrivate: false, requirePort443: true },
        resolve,
      ),
      '8443',
    );
  });

  it('accepts the https default port and an explicit :443 when port 443 is required', async () => {
    const policy: AddressPolicy = { allowPrivate: false, requirePort443: true };
    expectAccepted(await checkPublicUrl('https://example.com/hook', policy, resolve));
    expectAccepted(await checkPublicUrl('https://example.com:443/hook', policy, resolve));
  });

  it('refuses plain http on its default port 80 when port 443 is required', async () => {
    const policy: AddressPolicy = { allowPrivate: true, requirePort443: true };
    expectRefused(await checkPublicUrl('http://example.com/hook', policy, resolve), '80');
  });

  it.each([
    'https://user:secret@example.com/hook',
    'https://user@example.com/hook',
    'https://:secret@example.com/hook',
    'https://user:secret@93.184.215.14/hook',
  ])('refuses credentials in the URL %s', async (raw) => {
    expectRefused(await checkPublicUrl(raw, STRICT, resolve), 'username or password');
  });

  it('refuses a URL longer than 2000 characters and accepts one of exactly 2000', async () => {
    const base = 'https://example.com/';
    const exact = base + 'a'.repeat(2000 - base.length);
    expect(exact).toHaveLength(2000);
    expectAccepted(await checkPublicUrl(exact, STRICT, resolve));
    expectRefused(await checkPublicUrl(exact + 'a', STRICT, resolve), '2000');
  });

  it('refuses a URL that grows past 2000 characters when parsing percent-encodes it', async () => {
    const base = 'https://example.com/';
    const raw = base + ' '.repeat(2000 - base.length - 1) + 'x';
    expect(raw).toHaveLength(2000);
    expectRefused(await checkPublicUrl(raw, STRICT, resolve), '2000');
  });
});

describe('checkPublicUrl with allowPrivate (development)', () => {
  it('accepts loopback over http, for example http://127.0.0.1:9999/hook', async () => {
    const verdict = expectAccepted(await checkPublicUrl('http://127.0.0.1:9999/hook', DEV, stubResolver({})));
    expect(verdict.addresses).toEqual(['127.0.0.1']);
    expect(verdict.url.port).toBe('9999');
  });

  it.each(['http://10.0.0.1/', 'http://192.168.1.20:3000/', 'http://[::1]:8080/', 'https://[fd12:3456::1]/'])(
    'accepts the private address in %s',
    async (raw) => {
      expectAccepted(await checkPublicUrl(raw, DEV, stubResolver({})));
    },
  );

  it('resolves localhost through the resolver as any other name', async () => {
    const resolve = stubResolver({ localhost: ['127.0.0.1', '::1'] });
    const verdict = expectAccepted(await checkPublicUrl('http://localhost:9999/hook', DEV, resolve));
    expect(verdict.addresses).toEqual(['127.0.0.1', '::1']);
    expect(resolve.calls).toEqual(['localhost']);
  });

  it.each([
    'http://0.0.0.0/',
    'http://0/',
    'http://[::]/',
    'http://224.0.0.1/',
    'http://255.255.255.255/',
    'http://240.0.0.1/',
    'http://192.0.2.1/',
    'http://169.254.169.254/',
    'http://169.254.1.1/',
    'http://100.64.0.1/',
    'http://[fe80::1]/',
    'http://[ff02::1]/',
    'http://[2001:db8::1]/',
  ])('still refuses %s', async (raw) => {
    expectRefused(await checkPublicUrl(raw, DEV, stubResolver({})));
  });

  it('still refuses a name that resolves to the unspecified address', async () => {
    const resolve = stubResolver({ 'zero.example.com': ['0.0.0.0'] });
    expectRefused(await checkPublicUrl('http://zero.example.com/', DEV, resolve), '0.0.0.0');
  });
});

describe('checkPublicUrl as a whole', () => {
  it('never throws and only ever admits public addresses, whatever text it is given', async () => {
    const resolve: Resolver = async (hostname) =>
      hostname.length % 2 === 0 ? ['93.184.215.14'] : ['10.0.0.1'];
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.webUrl(), fc.string(), fc.ipV4(), fc.ipV6()), async (raw) => {
        const verdict = await checkPublicUrl(raw, STRICT, resolve);
        if (verdict.ok) {
          expect(verdict.addresses.length).toBeGreaterThan(0);
          for (const address of verdict.addresses) expect(isPublicIp(address)).toBe(true);
        } else {
          expect(verdict.reason).toMatch(/^[A-Z][^\n]*\.$/);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('cachedResolver', () => {
  function clock(start = 1_000) {
    let at = start;
    return { now: () => at, pass: (ms: number) => (at += ms) };
  }

  it('asks once per name within the time it keeps an answer, then asks again', async () => {
    const stub = stubResolver({ 'api.example.com': ['93.184.216.34'] });
    const time = clock();
    const resolve = cachedResolver(stub, 10_000, time.now);
    expect(await resolve('api.example.com')).toEqual(['93.184.216.34']);
    time.pass(9_999);
    expect(await resolve('API.example.com')).toEqual(['93.184.216.34']);
    expect(stub.calls).toEqual(['api.example.com']);
    time.pass(1);
    await resolve('api.example.com');
    expect(stub.calls).toEqual(['api.example.com', 'api.example.com']);
  });

  it('forgets a failed lookup at once, so the next ask tries again', async () => {
    const stub = stubResolver({});
    const resolve = cachedResolver(stub, 10_000, clock().now);
    await expect(resolve('missing.example.com')).rejects.toThrow();
    await expect(resolve('missing.example.com')).rejects.toThrow();
    expect(stub.calls).toEqual(['missing.example.com', 'missing.example.com']);
  });

  it('shares one lookup between concurrent asks for a name', async () => {
    const stub = stubResolver({ 'a.example.com': ['93.184.216.34'] });
    const resolve = cachedResolver(stub, 10_000, clock().now);
    const answers = await Promise.all([resolve('a.example.com'), resolve('a.example.com')]);
    expect(answers).toEqual([['93.184.216.34'], ['93.184.216.34']]);
    expect(stub.calls).toEqual(['a.example.com']);
  });

  it('keeps at most 1,024 names, dropping the oldest first', async () => {
    const table = Object.fromEntries(
      Array.from({ length: 1_025 }, (_, index) => [`h${index}.example.com`, ['93.184.216.34']]),
    );
    const stub = stubResolver(table);
    const resolve = cachedResolver(stub, 10_000, clock().now);
    for (let index = 0; index < 1_025; index++) await resolve(`h${index}.example.com`);
    await resolve('h1.example.com');
    expect(stub.calls.length).toBe(1_025);
    await resolve('h0.example.com');
    expect(stub.calls.length).toBe(1_026);
  });

  it('still refuses a kept answer the policy does not admit', async () => {
    const stub = stubResolver({ 'inside.example.com': ['10.0.0.5'] });
    const resolve = cachedResolver(stub, 10_000, clock().now);
    const first = await checkPublicUrl('https://inside.example.com/', { allowPrivate: false }, resolve);
    const second = await checkPublicUrl('https://inside.example.com/', { allowPrivate: false }, resolve);
    expect(first.ok).toBe(false);
    expect(second.ok).toBe(false);
    expect(stub.calls).toEqual(['inside.example.com']);
  });
});

describe('checkPublicUrl with the operator allow list (kept in production)', () => {
  const resolve = stubResolver({
    'hooks.internal.example': ['10.0.5.7'],
    'mixed.internal.example': ['10.0.5.7', '10.0.6.1'],
  });
  const LISTED: AddressPolicy = {
    allowPrivate: false,
    allowList: ['127.0.0.1/32', '10.0.5.0/24', 'fd00::/64'],
  };

  it('admits an address literal in a listed range over http and on any port, even with port 443 required', async () => {
    expectAccepted(await checkPublicUrl('http://127.0.0.1:9911/hook', LISTED, resolve));
    expectAccepted(await checkPublicUrl('http://[fd00::5]:8080/hook', LISTED, resolve));
    expectAccepted(
      await checkPublicUrl('http://10.0.5.9:8080/hook', { ...LISTED, requirePort443: true }, resolve),
    );
  });

  it('refuses what lies outside the listed ranges, as without a list', async () => {
    expectRefused(await checkPublicUrl('http://127.0.0.2:9911/hook', LISTED, resolve), 'https');
    expectRefused(await checkPublicUrl('https://127.0.0.2:9911/hook', LISTED, resolve), 'loopback');
    expectRefused(await checkPublicUrl('https://10.0.6.1/hook', LISTED, resolve), 'RFC 1918');
    expectRefused(
      await checkPublicUrl(
        'https://hooks.internal.example:8443/hook',
        { ...LISTED, requirePort443: true },
        resolve,
      ),
      '8443',
    );
  });

  it('admits a name only over https when every address it resolves to is listed', async () => {
    expectAccepted(await checkPublicUrl('https://hooks.internal.example/hook', LISTED, resolve));
    expectRefused(await checkPublicUrl('http://hooks.internal.example/hook', LISTED, resolve), 'https');
    expectRefused(await checkPublicUrl('https://mixed.internal.example/hook', LISTED, resolve), '10.0.6.1');
  });

  it('never admits a cloud metadata address, even when its range is listed', async () => {
    const wide: AddressPolicy = { allowPrivate: false, allowList: ['169.254.0.0/16', '0.0.0.0/0'] };
    expectRefused(await checkPublicUrl('http://169.254.169.254/latest', wide, resolve), 'metadata');
    expectAccepted(await checkPublicUrl('http://169.254.10.10/hook', wide, resolve));
  });

  it('names an entry that is not a CIDR range', () => {
    expect(allowListEntryProblem('10.0.5.0/24')).toBeNull();
    expect(allowListEntryProblem('fd00::/64')).toBeNull();
    for (const bad of ['10.0.5.0', '10.0.5.0/33', 'example.com/24', '']) {
      expect(allowListEntryProblem(bad)).toContain('CIDR');
    }
  });
});
