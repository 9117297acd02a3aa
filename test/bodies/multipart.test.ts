/** Multipart bodies read as a stream under the route's declared limits; every refusal names the part. */
import { Readable } from 'node:stream';
import { FormData } from 'undici';
import { describe, expect, it } from 'vitest';
import type { GatewayError } from '../../src/errors.js';
import { readMultipart, type MultipartSpec } from '../../src/bodies/multipart.js';

const spec: MultipartSpec = {
  files: {
    document: { maxBytes: 16, mime: new Set(['text/plain', 'application/pdf']), min: 1, max: 1 },
    image: { maxBytes: 8, mime: null, min: 0, max: 3 },
  },
  maxFields: 4,
  fieldMaxBytes: 10,
};

/** The bytes and content type a client would send for `form`. */
async function encode(form: FormData): Promise<{ stream: Readable; contentType: string }> {
  const response = new Response(form as unknown as BodyInit);
  const bytes = Buffer.from(await response.arrayBuffer());
  return { stream: Readable.from([bytes]), contentType: response.headers.get('content-type')! };
}

function form(build: (f: FormData) => void): FormData {
  const f = new FormData();
  build(f);
  return f;
}

async function read(f: FormData, s = spec): Promise<Awaited<ReturnType<typeof readMultipart>>> {
  const { stream, contentType } = await encode(f);
  return readMultipart(stream, contentType, s);
}

describe('readMultipart', () => {
  it('reads text fields (repeated or [] names as lists) and declared files with their bytes', async () => {
    const body = await read(form((f) => {
      f.append('model', 'm-1');
      f.append('to', 'de');
      f.append('to', 'fr');
      f.append('tags[]', 'one');
      f.append('document', new Blob(['hello'], { type: 'text/plain' }), 'a.txt');
      f.append('image[]', new Blob([Buffer.from([1, 2, 3])], { type: 'image/png' }), 'x.png');
      f.append('image[]', new Blob([Buffer.from([4])], { type: 'image/png' }), 'y.png');
    }));
    expect(body.fields).toEqual({ model: 'm-1', to: ['de', 'fr'], tags: ['one'] });
    expect(body.files.map((x) => [x.field, x.filename, x.contentType, x.data.toString('hex')])).toEqual([
      ['document', 'a.txt', 'text/plain', Buffer.from('hello').toString('hex')], ['image', 'x.png', 'image/png', '010203'], ['image', 'y.png', 'image/png', '04'],
    ]);
  });

  it('refuses each part outside the declaration, naming it', async () => {
    const doc = (f: FormData): void => f.append('document', new Blob(['ok'], { type: 'text/plain' }), 'a.txt');
    const cases: Array<[FormData, RegExp, string | null, number]> = [
      [form((f) => { doc(f); f.append('other', new Blob(['x']), 'o.bin'); }), /Unexpected file part 'other' \(this endpoint takes files in: document, image\)/, 'other', 400],
      [form((f) => { doc(f); doc(f); }), /At most 1 file in 'document'/, 'document', 400],
      [form((f) => f.append('document', new Blob(['%PDF'], { type: 'image/gif' }), 'a.gif')), /The file in 'document' is image\/gif; supported: text\/plain, application\/pdf/, 'document', 400],
      [form((f) => f.append('document', new Blob(['x'.repeat(17)], { type: 'text/plain' }), 'a.txt')), /The file in 'document' is larger than 16 bytes/, 'document', 413],
      [form((f) => f.append('model', 'm')), /Missing required file part 'document'/, 'document', 400],
      [form((f) => { doc(f); f.append('prompt', 'x'.repeat(11)); }), /The field 'prompt' is longer than 10 bytes/, 'prompt', 413],
      [form((f) => { doc(f); for (let i = 0; i < 5; i++) f.append(`f${i}`, 'v'); }), /Too many fields \(at most 4\)/, null, 400],
    ];
    for (const [f, message, param, status] of cases) {
      const error = await read(f).then(() => null, (e: unknown) => e);
      expect(error, String(message)).toMatchObject({ status });
      expect((error as GatewayError).extra.param ?? null).toBe(param);
      expect((error as Error).message).toMatch(message);
    }
  });

  it('refuses a body without a boundary, and a malformed one', async () => {
    await expect(readMultipart(Readable.from([Buffer.from('x')]), 'multipart/form-data', spec)).rejects.toMatchObject({ status: 400, message: 'The multipart body has no boundary in its Content-Type.' });
    const broken = readMultipart(Readable.from([Buffer.from('--b\r\nContent-Disposition: form-data; name="document"; filename="a"\r\n\r\nabc')]), 'multipart/form-data; boundary=b', spec);
    await expect(broken).rejects.toMatchObject({ status: 400 });
  });

  it('refuses parts without a name (a long one once hung the request), control characters in file names, and keeps __proto__ a plain field', async () => {
    const raw = (parts: string) => readMultipart(Readable.from([Buffer.from(`${parts}--b--\r\n`)]), 'multipart/form-data; boundary=b', spec);
    await expect(raw(`--b\r\nContent-Disposition: form-data\r\n\r\n${'x'.repeat(64)}\r\n`)).rejects.toMatchObject({ status: 400, message: expect.stringContaining('no valid name') });
    await expect(raw('--b\r\nContent-Disposition: form-data\r\n\r\nshort\r\n')).rejects.toMatchObject({ status: 400 });
    await expect(raw('--b\r\nContent-Disposition: form-data; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nabc\r\n')).rejects.toMatchObject({ status: 400 });
    await expect(raw('--b\r\nContent-Disposition: form-data; name="document"; filename="a\u0001b.txt"\r\nContent-Type: text/plain\r\n\r\nabc\r\n')).rejects.toMatchObject({ status: 400, message: expect.stringContaining('control character') });
    const proto = await raw('--b\r\nContent-Disposition: form-data; name="__proto__"\r\n\r\nv\r\n--b\r\nContent-Disposition: form-data; name="document"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nabc\r\n');
    expect(Object.keys(proto.fields)).toEqual(['__proto__']);
  });
});
