/**
 * The SSRF-safe fetcher end to end on an allow-listed loopback server (issue 11 item 7): bytes and
 * content type come back, only the fixed headers are sent, redirects are capped at 3, the size cap
 * and the total time are enforced, and a failing fetch is the client's 400, never a 5xx.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { fetchPublicUrl, MAX_REDIRECTS, type FetchPublicUrlOptions } from '../../../src/upstream/fetch/index.js';
import { closedPort, spyOnConnect, startServer, tableResolver, type TestServer } from './servers.js';

const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
let server: TestServer;
let base = '';
let opts: FetchPublicUrlOptions;

beforeAll(async () => {
  server = await startServer({
    '/file.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG),
    '/untyped': (_req, res) => { res.removeHeader('content-type'); res.writeHead(200).end('raw'); },
    '/hop': (req, res) => {
      const n = Number(new URL(req.url!, 'http://x').searchParams.get('n'));
      res.writeHead(302, { location: n > 0 ? `/hop?n=${n - 1}` : '/file.png' }).end();
    },
    '/declared-big': (_req, res) => res.writeHead(200, { 'content-length': '2048' }).end(Buffer.alloc(2048)),
    '/chunked-big': (_req, res) => { res.writeHead(200); const timer = setInterval(() => res.write(Buffer.alloc(512)), 5); res.on('close', () => clearInterval(timer)); },
    '/exact': (_req, res) => res.writeHead(200).end(Buffer.alloc(1024, 7)),
    '/stall-headers': () => undefined,
    '/stall-body': (_req, res) => { res.writeHead(200, { 'content-length': '100' }); res.write('x'); },
    '/missing': (_req, res) => res.writeHead(404).end('nope'),
    '/broken': (_req, res) => res.writeHead(500).end('oops'),
  });
  base = `http://127.0.0.1:${server.port}`;
  opts = { param: 'url', maxBytes: 1024, allowHosts: [`127.0.0.1:${server.port}`], resolver: tableResolver({}), timeoutMs: 2000 };
});
afterAll(async () => { await server.close(); });
afterEach(() => { vi.restoreAllMocks(); });

async function failure(url: string, extra: Partial<FetchPublicUrlOptions> = {}): Promise<string> {
  const error = await fetchPublicUrl(url, { ...opts, ...extra }).then(() => null, (e: unknown) => e);
  if (!(error instanceof GatewayError)) throw new Error(`${url}: expected a GatewayError, got ${String(error)}`);
  expect(error).toMatchObject({ code: 'invalid_request', status: 400, extra: { param: 'url' } });
  return error.message;
}

describe('fetchPublicUrl from an allow-listed host', () => {
  it('returns the bytes, the content type and the final URL; sends only the fixed headers', async () => {
    const connect = spyOnConnect();
    const got = await fetchPublicUrl(`${base}/file.png#fragment`, opts);
    expect(got).toEqual({ bytes: PNG, contentType: 'image/png', finalUrl: `${base}/file.png` });
    expect(connect).toHaveBeenCalledTimes(1); // the spy the refusal tests rely on does see real connects
    const { headers, url } = server.requests.at(-1)!;
    expect(url).toBe('/file.png');
    expect(Object.keys(headers).sort()).toEqual(expect.arrayContaining(['accept', 'host', 'user-agent']));
    expect(Object.keys(headers).filter((h) => !['accept', 'host', 'user-agent', 'connection'].includes(h))).toEqual([]);
    expect(headers['user-agent']).toBe('unified-ai-gateway-url-fetcher/1');
    expect(headers.accept).toBe('*/*');
  });

  it('an allow-listed name connects through the pinned lookup to its resolved address', async () => {
    const resolver = tableResolver({ 'files.test': ['127.0.0.1'] });
    const got = await fetchPublicUrl(`http://files.test:${server.port}/file.png`, { ...opts, resolver, allowHosts: [`files.test:${server.port}`] });
    expect(got.bytes).toEqual(PNG);
    expect(resolver.calls).toEqual(['files.test']);
    expect(server.requests.at(-1)!.headers.host).toBe(`files.test:${server.port}`);
  });

  it('an allow-listed IPv6 literal host is reached at that literal', async (ctx) => {
    const six = await startServer({ '/a': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('six') }, '::1').catch(() => null);
    if (!six) return ctx.skip();
    try {
      const got = await fetchPublicUrl(`http://[::1]:${six.port}/a`, { ...opts, allowHosts: [`[0:0::1]:${six.port}`] });
      expect(got).toMatchObject({ bytes: Buffer.from('six'), contentType: 'text/plain' });
    } finally { await six.close(); }
  });

  it('a missing content type is null', async () => {
    expect(await fetchPublicUrl(`${base}/untyped`, opts)).toMatchObject({ bytes: Buffer.from('raw'), contentType: null });
  });

  it(`follows up to ${MAX_REDIRECTS} redirects, each judged again; one more is refused`, async () => {
    expect((await fetchPublicUrl(`${base}/hop?n=${MAX_REDIRECTS - 1}`, opts)).finalUrl).toBe(`${base}/file.png`);
    expect(await failure(`${base}/hop?n=${MAX_REDIRECTS}`)).toBe(`url: the URL redirects more than ${MAX_REDIRECTS} times`);
  });

  it('the allow list applies per hop: a redirect onto the same host on another port is judged by the rules', async () => {
    const other = await startServer({ '/go': (_req, res) => res.writeHead(302, { location: `${base}/file.png` }).end() });
    try {
      const message = await failure(`http://127.0.0.1:${other.port}/go`, { allowHosts: [`127.0.0.1:${other.port}`] });
      expect(message).toBe('url: the URL redirects to a refused URL: only https URLs are accepted');
    } finally { await other.close(); }
  });
});

describe('caps (issue 11 item 7)', () => {
  it('refuses a Content-Length over the cap, and stops reading a body that grows past it', async () => {
    expect(await failure(`${base}/declared-big`)).toBe("url: the URL's content is larger than 1024 bytes");
    expect(await failure(`${base}/chunked-big`)).toBe("url: the URL's content is larger than 1024 bytes");
    expect((await fetchPublicUrl(`${base}/exact`, opts)).bytes.length).toBe(1024);
  });

  it('cuts a server that never answers, or stalls mid-body, at the total time', async () => {
    const started = Date.now();
    expect(await failure(`${base}/stall-headers`, { timeoutMs: 300 })).toBe('url: fetching the URL took longer than 0.3 s');
    expect(await failure(`${base}/stall-body`, { timeoutMs: 300 })).toBe('url: fetching the URL took longer than 0.3 s');
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

describe('failures are the client\'s 400', () => {
  it('an error status, a refused connection', async () => {
    expect(await failure(`${base}/missing`)).toBe('url: fetching the URL failed with HTTP status 404');
    expect(await failure(`${base}/broken`)).toBe('url: fetching the URL failed with HTTP status 500');
    const port = await closedPort();
    expect(await failure(`http://127.0.0.1:${port}/x`, { allowHosts: [`127.0.0.1:${port}`] })).toBe('url: the URL could not be fetched (ECONNREFUSED)');
  });

  it('https to a plain-http allow-listed server fails the TLS handshake as a 400', async () => {
    const message = await failure(`https://127.0.0.1:${server.port}/file.png`, { allowHosts: [`127.0.0.1:${server.port}`] });
    expect(message).toMatch(/^url: the URL could not be fetched/);
  });
});
