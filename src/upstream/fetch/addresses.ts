/**
 * The address rules of the SSRF-safe fetcher (issue 11 item 7): a pure decision over one resolved
 * address. Any spelling is accepted (WHATWG URL parsing canonicalises `127.1`, `0x7f000001`,
 * `0177.0.0.1`, `::ffff:127.0.0.1`, `[::1]`, expanded IPv6, zone ids); anything that is not an IP
 * address is refused. IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4, SIIT) are judged as
 * that IPv4 address; any other IPv6 address outside global unicast 2000::/3 is refused.
 */

/** One refused range: first address, prefix length, and the reason shown to the client. */
type Range<T> = readonly [base: T, bits: number, reason: string];

const V4_RANGES: readonly Range<number>[] = [
  ['0.0.0.0', 8, 'an unspecified ("this network") address'],
  ['10.0.0.0', 8, 'a private address'],
  ['100.64.0.0', 10, 'a carrier-grade NAT address'],
  ['127.0.0.0', 8, 'a loopback address'],
  ['169.254.169.254', 32, 'the cloud metadata address (link-local)'],
  ['169.254.0.0', 16, 'a link-local address'],
  ['172.16.0.0', 12, 'a private address'],
  ['192.0.0.0', 24, 'an IETF protocol address'],
  ['192.0.2.0', 24, 'a documentation address'],
  ['192.88.99.0', 24, 'a 6to4 relay address'],
  ['192.168.0.0', 16, 'a private address'],
  ['198.18.0.0', 15, 'a benchmarking address'],
  ['198.51.100.0', 24, 'a documentation address'],
  ['203.0.113.0', 24, 'a documentation address'],
  ['224.0.0.0', 4, 'a multicast address'],
  ['255.255.255.255', 32, 'the broadcast address'],
  ['240.0.0.0', 4, 'a reserved address'],
].map(([base, bits, reason]) => [v4Number(base as string)!, bits as number, reason as string] as const);

/** IPv6 ranges refused outright (checked after the IPv4-carrying forms). */
const V6_RANGES: readonly Range<bigint>[] = [
  ['::', 128, 'an unspecified address'],
  ['::1', 128, 'a loopback address'],
  ['::', 96, 'an IPv4-compatible IPv6 address (deprecated)'],
  ['64:ff9b:1::', 48, 'a local-use NAT64 address'],
  ['100::', 64, 'a discard-only address'],
  ['2001::', 32, 'a Teredo address'],
  ['2001:2::', 48, 'a benchmarking address'],
  ['2001:db8::', 32, 'a documentation address'],
  ['3fff::', 20, 'a documentation address'],
  ['fc00::', 7, 'a unique local address'],
  ['fe80::', 10, 'a link-local address'],
  ['fec0::', 10, 'a site-local address'],
  ['ff00::', 8, 'a multicast address'],
].map(([base, bits, reason]) => [v6Number(base as string)!, bits as number, reason as string] as const);

/** IPv6 prefixes whose address embeds an IPv4 address, and where (bit offset from the right). */
const V6_EMBEDDING: readonly (readonly [base: bigint, bits: number, shift: bigint, form: string])[] = [
  [v6Number('::ffff:0:0')!, 96, 0n, 'IPv4-mapped'],
  [v6Number('::ffff:0:0:0')!, 96, 0n, 'IPv4-translated'],
  [v6Number('64:ff9b::')!, 96, 0n, 'NAT64'],
  [v6Number('2002::')!, 16, 80n, '6to4'],
];

const GLOBAL_UNICAST = v6Number('2000::')!;

/** The IPv4 address as an unsigned 32-bit number, in any WHATWG spelling; null if it is not one. */
function v4Number(text: string): number | null {
  if (!/^[0-9a-fx.]+$/i.test(text)) return null;
  let host: string;
  try { host = new URL(`http://${text}/`).hostname; } catch { return null; }
  const parts = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(host);
  if (!parts) return null;
  return parts.slice(1).reduce((n, part) => n * 256 + Number(part), 0);
}

/** The IPv6 address as a 128-bit number, in any spelling (brackets and zone id allowed); null if not one. */
function v6Number(text: string): bigint | null {
  const bare = text.replace(/^\[(.*)\]$/, '$1').replace(/%[\w.-]*$/, '');
  if (!bare.includes(':') || !/^[0-9a-f:.]+$/i.test(bare)) return null;
  let host: string;
  try { host = new URL(`http://[${bare}]/`).hostname.slice(1, -1); } catch { return null; }
  // WHATWG output: lowercase hex groups, at most one `::`, no dotted tail.
  const [head = '', tail] = host.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.reduce((n, group) => (n << 16n) | BigInt(parseInt(group, 16)), 0n);
}

function inV4(value: number, [base, bits]: Range<number>): boolean {
  return bits === 0 || value >>> (32 - bits) === base >>> (32 - bits);
}

function inV6(value: bigint, base: bigint, bits: number): boolean {
  const shift = BigInt(128 - bits);
  return value >> shift === base >> shift;
}

function v4Reason(value: number): string | null {
  return V4_RANGES.find((range) => inV4(value, range))?.[2] ?? null;
}

function v6Reason(value: bigint): string | null {
  for (const [base, bits, shift, form] of V6_EMBEDDING) {
    if (!inV6(value, base, bits)) continue;
    const reason = v4Reason(Number((value >> shift) & 0xffff_ffffn));
    return reason === null ? null : `${reason} (${form})`;
  }
  const range = V6_RANGES.find(([base, bits]) => inV6(value, base, bits));
  if (range) return range[2];
  return inV6(value, GLOBAL_UNICAST, 3) ? null : 'a non-global IPv6 address';
}

/** The address in its canonical spelling (dotted quad, compressed lowercase IPv6) and family; null if not one. */
export function canonicalAddress(address: string): { address: string; family: 4 | 6 } | null {
  const text = address.trim();
  const v6 = v6Number(text);
  if (v6 !== null) return { address: new URL(`http://[${v6.toString(16).padStart(32, '0').replace(/(.{4})(?!$)/g, '$1:')}]/`).hostname.slice(1, -1), family: 6 };
  const v4 = v4Number(text);
  return v4 === null ? null : { address: [24, 16, 8, 0].map((s) => (v4 >>> s) & 255).join('.'), family: 4 };
}

/**
 * Why a connection to `address` is refused (a phrase such as "a private address"), or null when the
 * address is public. Fails closed: text that is not an IP address is refused. Issue 11 item 7.
 */
export function refusedAddressReason(address: string): string | null {
  const text = address.trim();
  const v6 = v6Number(text);
  if (v6 !== null) return v6Reason(v6);
  const v4 = v4Number(text);
  return v4 === null ? 'not an IP address' : v4Reason(v4);
}

/** True when the fetcher must not connect to `address` (see refusedAddressReason). */
export function isRefusedAddress(address: string): boolean {
  return refusedAddressReason(address) !== null;
}

/** `hostname` as WHATWG URL parsing leaves it, when it is an IP literal: the bare address; else null. */
export function ipLiteral(hostname: string): string | null {
  if (hostname.startsWith('[') && hostname.endsWith(']')) return hostname.slice(1, -1);
  return /^\d+\.\d+\.\d+\.\d+$/.test(hostname) ? hostname : null;
}
