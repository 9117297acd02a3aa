/** Upstream operations as data: path templates, static and per-request query, the auth header and prefix, multipart bodies. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { FormData } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyPool } from '../../src/upstream/key-pool.js';
import type { CompiledProvider } from '../../src/config/types.js';
import type { CancelSignal } from '../../src/cancel.js';
import { UpstreamClient } from '../../src/upstream/client.js';

let server: http.Server;
let base = '';
const seen: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders }> = [];
const bodies: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push({ method: req.method!, url: req.url!, headers: req.headers });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => { bodies.push(Buffer.concat(chunks).toString('latin1')); res.writeHead(200, { 'content-type': 'application/json' }).end('{}'); });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => { await new Promise((ok) => server.close(ok)); });

/** A caller's signal that never aborts and counts the listeners on it. */
class CountingSignal implements CancelSignal {
  readonly aborted = false;
  readonly reason = undefined;
  readonly listeners = new Set<() => void>();
  added = 0;
  addEventListener(_type: 'abort', listener: () => void): void { this.listeners.add(listener); this.added += 1; }
  removeEventListener(_type: 'abort', listener: () => void): void { this.listeners.delete(listener); }
}

function provider(): CompiledProvider {
  return {
    id: 'vendor', baseUrl: `${base}/api`, keys: new KeyPool(['secret-key']), auth: { header: 'xi-api-key', prefix: '' }, simulated: false, headers: { 'x-static': 'yes' },
    timeouts: { connectMs: 1000, headersMs: 5000, idleMs: 5000 }, skills: null,
    operations: {
      speak: { method: 'POST', path: '/v1/text-to-speech/{voice_id}', format: 'x', request: 'json', answer: 'json', query: '?output_format=mp3_44100_128', poll: null, binary: null, headers: {}, features: {} },
      remove: { method: 'DELETE', path: '/v1/files/{file_id}', format: 'x', request: 'json', answer: 'json', query: '', poll: null, binary: null, headers: {}, features: {} },
      generate: { method: 'POST', path: '/v1beta/models/{model}:generateContent', streamPath: '/v1beta/models/{model}:streamGenerateContent?alt=sse', format: 'x', request: 'json', answer: 'sse', query: '', poll: null, binary: null, headers: {}, features: {} },
    },
  };
}

describe('UpstreamClient', () => {
  it('fills path parameters URL-encoded, keeps the static query, appends the request query, sends the auth header', async () => {
    const client = new UpstreamClient();
    const res = await client.send(provider(), 'speak', { text: 'hi' }, new AbortController().signal, { pathParams: { voice_id: 'a b/ü' }, query: { seed: ['1', '2'] } });
    await res.body.dump();
    const last = seen.at(-1)!;
    expect(last.method).toBe('POST');
    expect(last.url).toBe('/api/v1/text-to-speech/a%20b%2F%C3%BC?output_format=mp3_44100_128&seed=1&seed=2');
    expect(last.headers['xi-api-key']).toBe('secret-key');
    expect(last.headers['x-static']).toBe('yes');
    await client.close();
  });

  it('sends a streamed request to the operation\'s stream path, a JSON one to its path, the model filled in both', async () => {
    const client = new UpstreamClient();
    for (const stream of [false, true]) {
      const res = await client.send(provider(), 'generate', { contents: [] }, new AbortController().signal, { pathParams: { model: 'gemini-2.5-flash' }, stream });
      await res.body.dump();
    }
    expect(seen.slice(-2).map((r) => r.url)).toEqual(['/api/v1beta/models/gemini-2.5-flash:generateContent', '/api/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse']);
    // An operation without a stream path streams on its own path.
    const res = await client.send(provider(), 'speak', { text: 'hi' }, new AbortController().signal, { pathParams: { voice_id: 'v' }, stream: true });
    await res.body.dump();
    expect(seen.at(-1)!.url).toBe('/api/v1/text-to-speech/v?output_format=mp3_44100_128');
    await client.close();
  });

  it('sends a FormData body as multipart/form-data with its own boundary', async () => {
    const client = new UpstreamClient();
    const form = new FormData();
    form.append('model_id', 'm');
    form.append('file', new Blob([Buffer.from('RIFF0000WAVE')], { type: 'audio/wav' }), 'a.wav');
    const multipart = provider();
    multipart.operations.speak!.request = 'multipart';
    const res = await client.send(multipart, 'speak', form, new AbortController().signal, { pathParams: { voice_id: 'v' } });
    await res.body.dump();
    const last = seen.at(-1)!;
    expect(last.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(bodies.at(-1)).toContain('name="model_id"');
    expect(bodies.at(-1)).toContain('filename="a.wav"');
    expect(bodies.at(-1)).toContain('RIFF0000WAVE');
    await client.close();
  });

  it('takes its abort listener off the caller\'s signal once the answer\'s body closes, or the call fails', async () => {
    // One request's signal serves every call it makes (a job polled many times): none may stay on it.
    const signal = new CountingSignal();
    const client = new UpstreamClient();
    for (let i = 0; i < 20; i++) {
      const res = await client.send(provider(), 'remove', null, signal, { pathParams: { file_id: `f${i}` } });
      expect(signal.listeners.size).toBe(1); // while the body is open, an abort still reaches it
      await (i % 2 === 0 ? res.body.dump() : res.body.text());
      await new Promise((r) => setImmediate(r)); // a stream's 'close' follows its end by a tick
      expect(signal.listeners.size).toBe(0);
    }
    const refused = { ...provider(), baseUrl: 'http://127.0.0.1:1/api' };
    await expect(client.send(refused, 'remove', null, signal, { pathParams: { file_id: 'x' } })).rejects.toThrow();
    expect(signal.listeners.size).toBe(0);
    expect(signal.added).toBe(21);
    await client.close();
  });

  it('sends a DELETE without a body', async () => {
    const client = new UpstreamClient();
    const res = await client.send(provider(), 'remove', null, new AbortController().signal, { pathParams: { file_id: 'file_123' } });
    await res.body.dump();
    expect(seen.at(-1)).toMatchObject({ method: 'DELETE', url: '/api/v1/files/file_123' });
    expect(seen.at(-1)!.headers['content-length'] ?? '0').toBe('0');
    await client.close();
  });
});
