/** The pure address rules of the SSRF-safe fetcher (issue 11 item 7): every range, in many spellings. */
import { describe, expect, it } from 'vitest';
import { canonicalAddress, isRefusedAddress, refusedAddressReason } from '../../../src/upstream/fetch/index.js';

/** Each IPv4 address in its WHATWG spellings and in every IPv6 form that embeds it. */
function v4Spellings(dotted: string): string[] {
  const n = dotted.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
  const [a, b, c, d] = dotted.split('.').map(Number) as [number, number, number, number];
  const hi = ((a << 8) | b).toString(16);
  const lo = ((c << 8) | d).toString(16);
  return [
    dotted, String(n), `0x${n.toString(16)}`, `0${a.toString(8)}.${b}.${c}.${d}`, `0x${a.toString(16)}.${b}.${c}.${d}`,
    `${a}.${(b << 16) | (c << 8) | d}`, `${dotted}.`,
    `::ffff:${dotted}`, `::FFFF:${hi}:${lo}`, `0:0:0:0:0:ffff:${hi.padStart(4, '0')}:${lo.padStart(4, '0')}`, `[::ffff:${hi}:${lo}]`,
    `0000:0000:0000:0000:0000:FFFF:${dotted}`, `::ffff:0:${dotted}`,
    `64:ff9b::${dotted}`, `64:ff9b::${hi}:${lo}`, `0064:ff9b:0:0:0:0:${hi}:${lo}`,
    `2002:${hi}:${lo}::`, `2002:${hi}:${lo}:1::1`,
  ];
}

const V4_REFUSED: Record<string, string[]> = {
  'unspecified ("this network")': ['0.0.0.0', '0.255.255.255', '0.1.2.3'],
  loopback: ['127.0.0.1', '127.255.255.254', '127.1.2.3'],
  private: ['10.0.0.1', '10.255.255.255', '172.16.0.1', '172.31.255.255', '192.168.0.1', '192.168.255.255'],
  'link-local': ['169.254.0.1', '169.254.255.255', '169.254.170.2'],
  'cloud metadata': ['169.254.169.254'],
  'carrier-grade NAT': ['100.64.0.0', '100.127.255.255', '100.100.100.200'],
  multicast: ['224.0.0.1', '239.255.255.250', '233.1.1.1'],
  reserved: ['240.0.0.1', '250.1.2.3', '255.255.255.254'],
  broadcast: ['255.255.255.255'],
  documentation: ['192.0.2.1', '198.51.100.7', '203.0.113.255'],
  benchmarking: ['198.18.0.1', '198.19.255.255'],
  'IETF protocol': ['192.0.0.8', '192.0.0.170'],
};

const V4_PUBLIC = ['8.8.8.8', '1.1.1.1', '93.184.216.34', '9.255.255.255', '11.0.0.0', '100.63.255.255', '100.128.0.0', '126.255.255.255', '128.0.0.0',
  '169.253.255.255', '169.255.0.0', '172.15.255.255', '172.32.0.0', '192.0.1.255', '192.0.3.0', '192.167.255.255', '192.169.0.0', '198.17.255.255',
  '198.20.0.0', '198.51.99.255', '198.51.101.0', '203.0.112.255', '203.0.114.0', '223.255.255.255'];

const V6_REFUSED: Record<string, string[]> = {
  unspecified: ['::', '0:0:0:0:0:0:0:0', '0000:0000:0000:0000:0000:0000:0000:0000', '[::]'],
  loopback: ['::1', '0:0:0:0:0:0:0:1', '0000:0000:0000:0000:0000:0000:0000:0001', '[::1]', '::0:1'],
  'unique local': ['fc00::1', 'fd00::1', 'FDFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF', 'fd12:3456:789a:1::1'],
  'link-local': ['fe80::1', 'FE80::1', 'fe80::1%eth0', 'febf:ffff::1', 'fe80:0000:0000:0000:0204:61ff:fe9d:f156'],
  multicast: ['ff00::', 'ff02::1', 'FF05::1:3', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
  documentation: ['2001:db8::', '2001:db8::1', '2001:0DB8:ffff:ffff:ffff:ffff:ffff:ffff', '3fff::1'],
  'IPv4-compatible': ['::127.0.0.1', '::7f00:1', '::8.8.8.8', '::a00:1'],
  'non-global': ['4000::1', 'e000::1', '1::1', 'c000::'],
  'discard-only': ['100::', '100::ffff:ffff:ffff:ffff'],
  'site-local': ['fec0::1', 'feff::1'],
  'local-use NAT64': ['64:ff9b:1::a00:1', '64:ff9b:1:ffff::808:808'],
  benchmarking: ['2001:2::1', '2001:0002:0000:ffff::1'],
  Teredo: ['2001::1', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
};

const V6_PUBLIC = ['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:82b::200e', '2001:db9::1', '2002:808:808::1',
  '64:ff9b::808:808', '::ffff:8.8.8.8', '::ffff:101:101', '2600::', '3ffe::1'];

describe('refusedAddressReason: IPv4 ranges (issue 11 item 7)', () => {
  for (const [range, addresses] of Object.entries(V4_REFUSED)) {
    it(`refuses ${range} addresses in every spelling, IPv4-mapped, NAT64 and 6to4 forms included`, () => {
      for (const address of addresses) {
        for (const spelling of v4Spellings(address)) {
          expect(refusedAddressReason(spelling), spelling).toContain(range);
          expect(isRefusedAddress(spelling), spelling).toBe(true);
        }
      }
    });
  }

  it('accepts public IPv4 addresses (range edges included) in every spelling', () => {
    for (const address of V4_PUBLIC) {
      for (const spelling of v4Spellings(address)) expect(refusedAddressReason(spelling), spelling).toBeNull();
    }
  });

  it('names the IPv6 form that carried the IPv4 address', () => {
    expect(refusedAddressReason('::ffff:7f00:1')).toBe('a loopback address (IPv4-mapped)');
    expect(refusedAddressReason('64:ff9b::a9fe:a9fe')).toBe('the cloud metadata address (link-local) (NAT64)');
    expect(refusedAddressReason('2002:a00:1::')).toBe('a private address (6to4)');
  });
});

describe('refusedAddressReason: IPv6 ranges (issue 11 item 7)', () => {
  for (const [range, addresses] of Object.entries(V6_REFUSED)) {
    it(`refuses ${range} addresses in compressed, expanded and bracketed forms`, () => {
      for (const address of addresses) expect(refusedAddressReason(address), address).toContain(range);
    });
  }

  it('accepts global unicast addresses, and IPv4-carrying forms of a public IPv4 address', () => {
    for (const address of V6_PUBLIC) expect(refusedAddressReason(address), address).toBeNull();
  });
});

describe('refusedAddressReason: fails closed on anything that is not an IP address', () => {
  it.each(['', 'localhost', 'example.com', 'a@127.0.0.1', '1.2.3.4.5', '256.0.0.1', '::g', '1:2:3:4:5:6:7:8:9', '127.0.0.1:80', '[::1]:80', ' ', '::ffff:1.2.3'])('%j', (text) => {
    expect(refusedAddressReason(text)).toBe('not an IP address');
  });
});

describe('canonicalAddress', () => {
  it('spells every form canonically with its family', () => {
    expect(canonicalAddress('0x7f.1')).toEqual({ address: '127.0.0.1', family: 4 });
    expect(canonicalAddress('2130706433')).toEqual({ address: '127.0.0.1', family: 4 });
    expect(canonicalAddress('0:0:0:0:0:FFFF:127.0.0.1')).toEqual({ address: '::ffff:7f00:1', family: 6 });
    expect(canonicalAddress('[2001:0DB8:0000:0000:0000:0000:0000:0001]')).toEqual({ address: '2001:db8::1', family: 6 });
    expect(canonicalAddress('fe80::1%eth0')).toEqual({ address: 'fe80::1', family: 6 });
    expect(canonicalAddress('example.com')).toBeNull();
  });
});
