/**
 * End to end on loopback (issue 11 item 7): known SSRF bypass spellings, all resolving to loopback,
 * are refused while a canary counts connections and a spy counts socket connects (both stay at
 * zero); a redirect from an allow-listed host to a refused one is refused; the allow-listed host
 * serves its file. Names go through an injected resolver, so no test traffic leaves loopback.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { fetchPublicUrl } from '../../../src/upstream/fetch/index.js';
import { BYPASSES, BYPASS_NAMES, spyOnConnect, startCanary, startServer, tableResolver, type Canary, type TestServer } from './servers.js';

let canary: Canary;
let allowed: TestServer;
const resolver = tableResolver(BYPASS_NAMES);

beforeAll(async () => {
  canary = await startCanary();
  allowed = await startServer({
    '/to-canary': (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${canary.port}/` }).end(),
    '/to-canary-name': (_req, res) => res.writeHead(301, { location: `https://localhost:${canary.port}/x` }).end(),
    '/to-canary-v6': (_req, res) => res.writeHead(307, { location: `https://[::ffff:7f00:1]:${canary.port}/` }).end(),
    '/to-file-scheme': (_req, res) => res.writeHead(308, { location: 'file:///etc/passwd' }).end(),
    '/to-userinfo': (_req, res) => res.writeHead(303, { location: `http://allowed.test@127.0.0.1:${allowed.port}/file` }).end(),
  });
});
afterAll(async () => { await canary.close(); await allowed.close(); });
afterEach(() => { vi.restoreAllMocks(); });

async function refused(url: string, allowHosts: readonly string[] = []): Promise<GatewayError> {
  const error = await fetchPublicUrl(url, { param: 'image', maxBytes: 1 << 20, allowHosts, resolver, timeoutMs: 2000 }).then(() => null, (e: unknown) => e);
  if (!(error instanceof GatewayError)) throw new Error(`${url} was not refused: ${String(error)}`);
  expect(error).toMatchObject({ code: 'invalid_request', status: 400, extra: { param: 'image' } });
  expect(error.message.startsWith('image: ')).toBe(true);
  return error;
}


describe('SSRF bypass URLs resolving to loopback (issue 11 item 7)', () => {
  it('refuses every one; the canary and the socket spy stay at zero', async () => {
    const connect = spyOnConnect();
    const urls = BYPASSES(canary.port);
    expect(urls.length).toBeGreaterThanOrEqual(30);
    for (const url of urls) await refused(url);
    expect(connect).not.toHaveBeenCalled();
    expect(canary.connections()).toBe(0);
  });

  it('an allow-list entry for the canary\'s port but another spelling or scheme does not open it', async () => {
    const connect = spyOnConnect();
    const allow = [`localhost:${canary.port}`];
    await refused(`https://127.0.0.1:${canary.port}/`, allow);
    await refused(`http://localhost.:${canary.port}/`, allow);
    await refused(`http://localhost:${canary.port + 1 === 65536 ? 1 : canary.port + 1}/`, allow);
    await refused(`http://user@localhost:${canary.port}/`, allow);
    expect(connect).not.toHaveBeenCalled();
    expect(canary.connections()).toBe(0);
  });
});

describe('redirects from an allow-listed host (issue 11 item 7)', () => {
  it.each([
    ['/to-canary', "image: the URL redirects to a refused URL: only https URLs are accepted"],
    ['/to-canary-name', "image: the URL redirects to a refused URL: the URL's host resolves to a loopback address"],
    ['/to-canary-v6', "image: the URL redirects to a refused URL: the URL's host is a loopback address (IPv4-mapped)"],
    ['/to-file-scheme', 'image: the URL redirects to a refused URL: only https URLs are accepted, not file:'],
    ['/to-userinfo', 'image: the URL redirects to a refused URL: URLs carrying credentials (user:password@) are not accepted'],
  ])('%s is refused and the canary untouched', async (path, message) => {
    const error = await refused(`http://127.0.0.1:${allowed.port}${path}`, [`127.0.0.1:${allowed.port}`]);
    expect(error.message).toBe(message);
    expect(canary.connections()).toBe(0);
  });

  it('a redirect to https on the canary\'s port is refused even when the canary is reachable by name only via the allowed name', async () => {
    const error = await refused(`http://allowed.test:${allowed.port}/to-canary-name`, [`allowed.test:${allowed.port}`]);
    expect(error.message).toBe("image: the URL redirects to a refused URL: the URL's host resolves to a loopback address");
    expect(canary.connections()).toBe(0);
  });
});
