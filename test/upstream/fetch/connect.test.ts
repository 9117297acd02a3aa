/**
 * Connect-time checks of the SSRF-safe fetcher (issue 11 item 7): names resolved through an injected
 * resolver to refused addresses are refused before any socket is created (a spy on every socket
 * connect and a canary counting connections prove it), and the connection's lookup answers only the
 * addresses that were checked, so a rebinding second answer is never connected to.
 */
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { pinnedLookup } from '../../../src/upstream/fetch/fetch.js';
import { fetchPublicUrl, type Resolver } from '../../../src/upstream/fetch/index.js';
import { spyOnConnect, startCanary, tableResolver, type Canary } from './servers.js';

let canary: Canary;
beforeAll(async () => { canary = await startCanary(); });
afterAll(async () => { await canary.close(); });
afterEach(() => { vi.restoreAllMocks(); });

async function refusal(url: string, resolver: Resolver, timeoutMs?: number): Promise<GatewayError> {
  const error = await fetchPublicUrl(url, { param: 'image', maxBytes: 1024, allowHosts: [], resolver, timeoutMs }).then(() => null, (e: unknown) => e);
  if (!(error instanceof GatewayError)) throw new Error(`${url}: expected a GatewayError, got ${String(error)}`);
  expect(error).toMatchObject({ code: 'invalid_request', status: 400, extra: { param: 'image' } });
  return error;
}

const TABLE: Record<string, readonly string[]> = {
  'evil.test': ['10.0.0.5'],
  'corp.test': ['172.20.1.1'],
  'home.test': ['192.168.1.1'],
  'link.test': ['169.254.1.1'],
  'metadata.test': ['169.254.169.254'],
  'loop.test': ['127.0.0.1'],
  'loop6.test': ['::1'],
  'cgnat.test': ['100.64.1.1'],
  'ula.test': ['fd00::1'],
  'mapped.test': ['::ffff:169.254.169.254'],
  'mapped-hex.test': ['::ffff:a9fe:a9fe'],
  'nat64.test': ['64:ff9b::a9fe:a9fe'],
  'sixto4.test': ['2002:a9fe:a9fe::1'],
  'linklocal6.test': ['fe80::1'],
  'mixed.test': ['93.184.216.34', '10.0.0.1'],
  'garbage.test': ['not-an-address'],
};

const EXPECTED: Record<string, string> = {
  'evil.test': 'a private address', 'corp.test': 'a private address', 'home.test': 'a private address',
  'link.test': 'a link-local address', 'metadata.test': 'the cloud metadata address (link-local)',
  'loop.test': 'a loopback address', 'loop6.test': 'a loopback address', 'cgnat.test': 'a carrier-grade NAT address',
  'ula.test': 'a unique local address', 'mapped.test': 'the cloud metadata address (link-local) (IPv4-mapped)',
  'mapped-hex.test': 'the cloud metadata address (link-local) (IPv4-mapped)', 'nat64.test': 'the cloud metadata address (link-local) (NAT64)',
  'sixto4.test': 'the cloud metadata address (link-local) (6to4)', 'linklocal6.test': 'a link-local address',
  'mixed.test': 'a private address', 'garbage.test': 'something that is not an IP address',
};

describe('connect-time address check with an injected resolver', () => {
  for (const name of Object.keys(TABLE)) {
    it(`refuses ${name} (${TABLE[name]!.join(', ')}) before any socket exists`, async () => {
      const resolver = tableResolver(TABLE);
      const connect = spyOnConnect();
      for (const url of [`https://${name}:${canary.port}/a.png`, `https://${name}/a.png`]) {
        const error = await refusal(url, resolver);
        expect(error.message).toBe(`image: the URL's host resolves to ${EXPECTED[name]}`);
      }
      expect(resolver.calls).toEqual([name, name]);
      expect(connect).not.toHaveBeenCalled();
      expect(canary.connections()).toBe(0);
    });
  }

  it('a name that does not resolve is the client\'s 400, with no socket', async () => {
    const connect = spyOnConnect();
    const error = await refusal('https://nowhere.test/a.png', tableResolver({}));
    expect(error.message).toBe("image: the URL's host could not be resolved");
    expect(connect).not.toHaveBeenCalled();
  });

  it('a resolver that never answers is cut by the total time, with no socket', async () => {
    const connect = spyOnConnect();
    const error = await refusal('https://slow.test/a.png', () => new Promise(() => undefined), 200);
    expect(error.message).toBe('image: fetching the URL took longer than 0.2 s');
    expect(connect).not.toHaveBeenCalled();
  });
});

describe('DNS rebinding', () => {
  it('the connection is handed only the checked answer: a second, rebinding answer is never asked for or used', async () => {
    let calls = 0;
    const rebinding: Resolver = async () => (calls++ === 0 ? [{ address: '1.1.1.1', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
    const seen: net.NetConnectOpts[] = [];
    // No traffic at all: the socket connect is replaced by one that records its options and fails.
    vi.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (this: net.Socket, ...args: unknown[]) {
      const first = args[0];
      seen.push((Array.isArray(first) ? first[0] : first) as net.NetConnectOpts);
      process.nextTick(() => this.destroy(Object.assign(new Error('connect blocked by the test'), { code: 'ETESTBLOCKED' })));
      return this;
    });
    const error = await refusal(`https://rebind.test:${canary.port}/a.png`, rebinding);
    expect(error.message).toBe('image: the URL could not be fetched (ETESTBLOCKED)');
    expect(calls).toBe(1);
    expect(seen).toHaveLength(1);
    const { host, lookup } = seen[0] as net.TcpNetConnectOpts;
    expect(host).toBe('rebind.test');
    const all = await new Promise((ok, fail) => lookup!('rebind.test', { all: true }, (err, addresses) => (err ? fail(err) : ok(addresses))));
    expect(all).toEqual([{ address: '1.1.1.1', family: 4 }]);
    const one = await new Promise((ok) => lookup!('rebind.test', {}, (_err, address, family) => ok([address, family])));
    expect(one).toEqual(['1.1.1.1', 4]);
    await expect(new Promise((ok, fail) => lookup!('other.test', {}, (err) => (err ? fail(err) : ok(null))))).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(calls).toBe(1);
    expect(canary.connections()).toBe(0);
  });

  it('pinnedLookup judges its addresses again, filters by family, and answers nothing for other names', async () => {
    const ask = (lookup: net.LookupFunction, name: string, options: object): Promise<unknown> =>
      new Promise((ok, fail) => lookup(name, options, (err, address, family) => (err ? fail(err) : ok(Array.isArray(address) ? address : [address, family]))));
    const mixed = pinnedLookup('x.test', [{ address: '1.1.1.1', family: 4 }, { address: '2606:4700::1111', family: 6 }, { address: '127.0.0.1', family: 4 }], false);
    expect(await ask(mixed, 'x.test', { all: true })).toEqual([{ address: '1.1.1.1', family: 4 }, { address: '2606:4700::1111', family: 6 }]);
    expect(await ask(mixed, 'x.test', { family: 6 })).toEqual(['2606:4700::1111', 6]);
    await expect(ask(pinnedLookup('x.test', [{ address: '10.0.0.1', family: 4 }], false), 'x.test', {})).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(await ask(pinnedLookup('ok.test', [{ address: '127.0.0.1', family: 4 }], true), 'ok.test', {})).toEqual(['127.0.0.1', 4]);
    await expect(ask(mixed, 'X.test', { all: true })).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });
});
