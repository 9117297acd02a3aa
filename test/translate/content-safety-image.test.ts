/**
 * native-json--azure-content-safety-image beyond its golden fixtures (spec 4.11; `ImageData` limits in
 * docs/vendors/anthropic-files.md section 3): every refusal is a 400 naming `image` when the translator
 * is created (so before anything is reserved); accepted inputs go upstream as canonical base64; the
 * text translator refuses an image it cannot score. Also the shared image reader (src/translate/image-input.ts).
 */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { imageDimensions, imageFormat } from '../../src/files/verify/dimensions.js';
import { decodeBase64 } from '../../src/translate/image-input.js';
import { createTranslator } from '../../src/translate/registry.js';
import { gifHeader, png } from '../helpers/images.js';

const MODEL = 'content-safety-image';
const moderateImage = (body: Record<string, unknown>) => createTranslator('native-json', 'azure-content-safety-image', { model: MODEL, ...body }, MODEL);
const refusal = (image: unknown): GatewayError => {
  try { moderateImage({ image }); } catch (error) { return error as GatewayError; }
  throw new Error('accepted');
};

describe('native-json--azure-content-safety-image', () => {
  const image = png(64, 64);
  const b64 = image.toString('base64');

  it('sends base64, a data URL, URL-safe, unpadded or wrapped base64 as the same canonical content', () => {
    const urlSafe = png(64, 64, 0xfb).toString('base64');
    expect(urlSafe).toMatch(/[+/]/);
    const variants: Array<[string, string]> = [
      [b64, b64],
      [`data:image/png;base64,${b64}`, b64],
      [`DATA:image/png;name=x.png;BASE64,${b64}`, b64],
      [b64.replace(/=+$/, ''), b64],
      [b64.replace(/.{40}/g, '$&\r\n'), b64],
      [urlSafe.replace(/\+/g, '-').replace(/\//g, '_'), urlSafe],
    ];
    for (const [input, content] of variants) {
      const body = { model: MODEL, image: input, categories: ['Hate'] };
      expect(moderateImage(body).request(body, null as never), input.slice(0, 40)).toEqual({ image: { content }, categories: ['Hate'] });
    }
    // A declared type is not trusted: the bytes decide (a GIF sent as a PNG data URL is a GIF).
    expect(() => moderateImage({ image: `data:image/png;base64,${gifHeader(60, 60).toString('base64')}` })).not.toThrow();
  });

  it('refuses invalid base64, a data URL without base64, a non-image, over 4 MiB, and sides outside 50..2048 pixels, naming image', () => {
    const cases: Array<[unknown, RegExp]> = [
      ['not base64!', /'image' is not valid base64/],
      ['QUJD=A', /not valid base64/],
      ['QUJDR', /not valid base64/],
      ['QUJD+_', /not valid base64/],
      ['', /not valid base64/],
      ['====', /not valid base64/],
      ['data:image/png,%89PNG', /not valid base64/],
      ['data:image/png;base64', /not valid base64/],
      [Buffer.from('%PDF-1.7 a document').toString('base64'), /'image' is not a PNG, JPEG, GIF, BMP, TIFF or WEBP image/],
      [Buffer.concat([png(64, 64), Buffer.alloc(4 * 1024 * 1024)]).toString('base64'), /The image is 4194\d{3} bytes; the limit is 4194304 bytes/],
      [png(2, 2).toString('base64'), /The image is 2 x 2 pixels; it must be from 50 x 50 to 2048 x 2048/],
      [png(49, 300).toString('base64'), /49 x 300 pixels/],
      [gifHeader(2049, 100).toString('base64'), /2049 x 100 pixels/],
      [7, /'image' must be a base64 string or a data URL/],
    ];
    for (const [input, message] of cases) {
      const e = refusal(input);
      expect(e, String(input).slice(0, 40)).toBeInstanceOf(GatewayError);
      expect([e.code, e.status, e.extra.param], String(input).slice(0, 40)).toEqual(['invalid_request', 400, 'image']);
      expect(e.message).toMatch(message);
    }
    // Exactly 4 MiB is accepted (size is not checked from the PNG's made-up tail).
    const limit = Buffer.concat([png(64, 64), Buffer.alloc(4 * 1024 * 1024 - png(64, 64).length)]);
    expect(() => moderateImage({ image: limit.toString('base64') })).not.toThrow();
  });

  it('answers in the route\'s one moderation shape and treats a malformed answer as the upstream\'s fault', () => {
    const t = moderateImage({ image: b64 });
    expect(t.response({ categoriesAnalysis: [{ category: 'Violence' }] }, MODEL).body).toEqual({ object: 'moderation', model: MODEL, categories_analysis: [{ category: 'Violence', severity: null }], usage: { records: 1 } });
    expect(() => t.response({ categoriesAnalysis: 'none' }, MODEL)).toThrow(expect.objectContaining({ code: 'upstream_error', status: 502 }));
    expect(() => t.stream(MODEL)).toThrow(/does not stream/);
  });

  it('the text translator refuses an image (a provider without image analysis), naming it', () => {
    const e = (() => { try { createTranslator('native-json', 'azure-content-safety', { image: b64 }, MODEL); } catch (error) { return error as GatewayError; } return null; })();
    expect(e).toMatchObject({ code: 'unsupported_parameter', status: 400, extra: { param: 'image' } });
  });
});

describe('image-input', () => {
  it('knows the six formats by their magic bytes, and the sizes of PNG, GIF, BMP and JPEG headers', () => {
    const bmp = Buffer.alloc(26); bmp.write('BM', 0, 'latin1'); bmp.writeInt32LE(300, 18); bmp.writeInt32LE(-200, 22);
    const jpeg = Buffer.from('ffd8ffe000104a46494600010100000100010000ffc0000b080064012c01011100', 'hex');
    const webp = Buffer.concat([Buffer.from('RIFF\0\0\0\0WEBP', 'latin1'), Buffer.alloc(8)]);
    expect([png(1, 1), jpeg, gifHeader(1, 1), bmp, Buffer.from('II*\0', 'latin1'), Buffer.from('MM\0*', 'latin1'), webp, Buffer.from('hello')].map((b) => imageFormat(b)))
      .toEqual(['png', 'jpeg', 'gif', 'bmp', 'tiff', 'tiff', 'webp', undefined]);
    // Sizes come from the one reader (src/files/verify/dimensions.ts); a WebP without a frame header has none.
    expect(imageDimensions(png(70, 90))).toEqual({ width: 70, height: 90 });
    expect(imageDimensions(gifHeader(64, 48))).toEqual({ width: 64, height: 48 });
    expect(imageDimensions(bmp)).toEqual({ width: 300, height: 200 });
    expect(imageDimensions(jpeg)).toEqual({ width: 300, height: 100 });
    expect(imageDimensions(webp)).toBeNull();
  });

  it('decodes base64 strictly: impossible lengths, stray padding and mixed alphabets are null', () => {
    expect(decodeBase64('aGk=')?.toString()).toBe('hi');
    expect(decodeBase64('aGk')?.toString()).toBe('hi');
    expect([decodeBase64('aGk=='), decodeBase64('a'), decodeBase64('aG=k'), decodeBase64('a+_b'), decodeBase64('')]).toEqual([null, null, null, null, null]);
  });
});
