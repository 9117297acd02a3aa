/**
 * Downloading a vendor's output (src/upstream/download.ts) and checking it (src/pipeline/forward/outputs.ts
 * inspectOutput): no credential sent, no redirect followed, bounded size whether or not the length is
 * declared, any status but 200 refused; the bytes' sniffed type must be one the manifest lists and an
 * image's header readable. Every refusal is a 502.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectOutput } from '../../src/pipeline/forward/outputs.js';
import { grayJpeg, grayPng } from '../../src/sim/gray-images.js';
import { downloadOutput } from '../../src/upstream/download.js';

let server: http.Server;
let base = '';
const seen: http.IncomingHttpHeaders[] = [];
const IMAGE = grayPng(32, 16);

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(req.headers);
    if (req.url === '/image.png') { res.writeHead(200, { 'content-type': 'image/png', 'content-length': IMAGE.length }).end(IMAGE); return; }
    if (req.url === '/chunked') { res.writeHead(200, { 'content-type': 'image/png' }); res.write(Buffer.alloc(600)); res.end(Buffer.alloc(600)); return; }
    if (req.url === '/redirect') { res.writeHead(302, { location: '/image.png' }).end(); return; }
    res.writeHead(404).end('nope');
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => { await new Promise((ok) => server.close(ok)); });

const options = (maxBytes = 1_000_000) => ({ maxBytes, signal: new AbortController().signal, timeouts: { headersMs: 2000, idleMs: 2000 } });

describe('downloadOutput', () => {
  it('reads the bytes with no credential header', async () => {
    seen.length = 0;
    expect((await downloadOutput(new URL(`${base}/image.png`), options())).equals(IMAGE)).toBe(true);
    expect(seen[0]!['x-key']).toBeUndefined();
    expect(seen[0]!.authorization).toBeUndefined();
  });

  it('refuses a larger output than allowed, declared or streamed, a redirect and an error status, all as 502', async () => {
    for (const [path, max, text] of [['/image.png', 10, 'larger than 10 bytes'], ['/chunked', 1000, 'larger than 1000 bytes'], ['/redirect', 1e6, 'HTTP 302'], ['/missing', 1e6, 'HTTP 404']] as const) {
      await expect(downloadOutput(new URL(`${base}${path}`), options(max)), path).rejects.toMatchObject({ code: 'upstream_error', status: 502, message: expect.stringContaining(text) });
    }
  });
});

describe('inspectOutput', () => {
  const spec = { pointer: ['u'], hosts: [], maxBytes: 1e6, contentTypes: new Set(['image/png', 'image/jpeg']) };

  it('sniffs and measures PNG and JPEG', async () => {
    expect(await inspectOutput(grayPng(40, 30), spec)).toEqual({ contentType: 'image/png', width: 40, height: 30 });
    expect(await inspectOutput(grayJpeg(1040, 1024), spec)).toEqual({ contentType: 'image/jpeg', width: 1040, height: 1024 });
  });

  it('refuses another type, unknown bytes and an unreadable image header with a 502', async () => {
    const webp = Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from('WEBPVP8 '), Buffer.alloc(30)]);
    await expect(inspectOutput(webp, spec)).rejects.toMatchObject({ status: 502, message: expect.stringContaining('image/webp') });
    await expect(inspectOutput(Buffer.from('<html>expired link</html>'), spec)).rejects.toMatchObject({ status: 502, message: expect.stringContaining('not a recognised file type') });
    const headless = Buffer.concat([grayPng(8, 8).subarray(0, 8), Buffer.alloc(40)]);
    await expect(inspectOutput(headless, spec)).rejects.toMatchObject({ status: 502 });
  });
});
