/**
 * Azure AI Content Safety `POST /contentsafety/image:analyze?api-version=2024-09-01` in the simulator
 * (docs/vendors/native-ops.md): `AnalyzeImageResult` with the four categories and severities 0, 2, 4, 6
 * that follow the image bytes; `InvalidRequestBody` for bad base64, a non-image, an image outside the
 * size limits, or both `content` and `blobUrl`; faults scoped by `azure-content-safety`.
 */
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { imageDimensions, imageFormat } from '../../src/sim/azure-content-safety.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { png } from '../helpers/images.js';
import { simCall, type RawAnswer } from './helpers.js';

let sim: Simulator;

beforeAll(async () => { sim = await startSimulator(); });
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

const PATH = '/contentsafety/image:analyze?api-version=2024-09-01';
const analyze = (body: unknown, path = PATH) => simCall(sim.url, path, 'POST', body);

const expectInvalid = (res: RawAnswer, pattern: RegExp) => {
  expect(res.status, res.text).toBe(400);
  expect(res.headers['x-ms-error-code']).toBe('InvalidRequestBody');
  expect(res.json.error).toMatchObject({ code: 'InvalidRequestBody', message: expect.stringMatching(pattern) });
};

describe('Azure Content Safety POST /contentsafety/image:analyze', () => {
  it('answers the four categories with severities 0, 2, 4 or 6, deterministic per image', async () => {
    const image = png(64, 64).toString('base64');
    const res = await analyze({ image: { content: image } });
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.json)).toEqual(['categoriesAnalysis']);
    const analysis = res.json.categoriesAnalysis as Array<{ category: string; severity: number }>;
    expect(analysis.map((c) => c.category)).toEqual(['Hate', 'SelfHarm', 'Sexual', 'Violence']);
    for (const c of analysis) expect([0, 2, 4, 6]).toContain(c.severity);
    expect((await analyze({ image: { content: image }, outputType: 'FourSeverityLevels' })).json).toEqual(res.json);
    const some = await analyze({ image: { content: image }, categories: ['Violence'] });
    expect(some.json.categoriesAnalysis).toEqual([analysis[3]]);
    const severities = new Set<number>();
    for (let seed = 0; seed < 24; seed++) {
      const r = await analyze({ image: { content: png(50, 60, seed).toString('base64') } });
      for (const c of r.json.categoriesAnalysis as Array<{ severity: number }>) severities.add(c.severity);
    }
    expect(severities.size).toBeGreaterThan(1);
  });

  it('answers 400 InvalidRequestBody for bad base64, a non-image, a bad size, or two sources', async () => {
    expectInvalid(await analyze({ image: { content: 'not base64!' } }), /base64/);
    expectInvalid(await analyze({ image: { content: Buffer.from('hello, world').toString('base64') } }), /format/);
    expectInvalid(await analyze({ image: { content: png(20, 20).toString('base64') } }), /20 x 20/);
    expectInvalid(await analyze({ image: { content: png(64, 2049).toString('base64') } }), /2049/);
    expectInvalid(await analyze({ image: { content: png(64, 64).toString('base64'), blobUrl: 'https://x.blob.core.windows.net/c/i.png' } }), /Exactly one/);
    expectInvalid(await analyze({ image: { content: png(64, 64).toString('base64') }, outputType: 'EightSeverityLevels' }), /FourSeverityLevels/);
    expectInvalid(await analyze({ image: { content: png(64, 64).toString('base64') }, text: 'x' }), /text/);
    expectInvalid(await analyze({}), /image/);
    expect((await analyze({ image: { blobUrl: 'https://x.blob.core.windows.net/c/i.png' } })).status).toBe(200);
    expect((await analyze({ image: { content: png(64, 64).toString('base64') } }, '/contentsafety/image:analyze')).status).toBe(404);
  });

  it('applies faults scoped by azure-content-safety', async () => {
    await simCall(sim.url, '/__sim/faults', 'POST', { model: 'azure-content-safety', fault: { status: 429, times: 1 } });
    const res = await analyze({ image: { content: png(64, 64).toString('base64') } });
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('7');
    expect((await analyze({ image: { content: png(64, 64).toString('base64') } })).status).toBe(200);
  });

  it('reads formats by magic bytes and sizes from headers', () => {
    const gif = Buffer.from('GIF89a\x40\x00\x30\x00', 'latin1');
    expect(imageFormat(gif)).toBe('gif');
    expect(imageDimensions(gif)).toEqual({ width: 64, height: 48 });
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x04, 0x00, 0x00, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x60, 0x00, 0x80, 0x03]);
    expect(imageFormat(jpeg)).toBe('jpeg');
    expect(imageDimensions(jpeg)).toEqual({ width: 128, height: 96 });
    expect(imageFormat(Buffer.from('RIFF\x00\x00\x00\x00WEBPVP8 ', 'latin1'))).toBe('webp');
    expect(imageFormat(Buffer.from('II*\x00', 'latin1'))).toBe('tiff');
    expect(imageFormat(Buffer.from('%PDF-1.4'))).toBeUndefined();
  });
});
