/**
 * Azure AI Vision Image Analysis 4.0 in the simulator (src/sim/azure-image-analysis.ts; spec
 * shared/specs/azure/image-analysis/generated.json): `POST /computervision/imageanalysis:analyze` over
 * raw image bytes answers an `ImageAnalysisResult` holding exactly the requested features, derived from
 * the bytes; the api-version, the query, the content type, the key header and the image are checked;
 * faults scope by `azure-image-analysis`.
 */
import { createHash } from 'node:crypto';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { png } from '../helpers/images.js';
import { jpeg } from '../helpers/jpeg.js';
import { pdfOf } from '../helpers/documents.js';

let sim: Simulator;

beforeAll(async () => { sim = await startSimulator(); });
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

const PATH = '/computervision/imageanalysis:analyze';

/** Posts `bytes` with the query (api-version 2023-10-01 unless `query` sets it). */
async function analyze(bytes: Buffer | string, query: Record<string, string>, headers: Record<string, string> = { 'content-type': 'application/octet-stream' }) {
  const params = new URLSearchParams({ 'api-version': '2023-10-01', ...query });
  for (const [k, v] of Object.entries(query)) if (v === '') params.delete(k);
  const res = await request(`${sim.url}${PATH}?${params}`, { method: 'POST', headers, body: bytes });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, json: JSON.parse(text) as any };
}

/** A little-endian TIFF header with one directory giving ImageWidth and ImageLength (LONG). */
function tiff(width: number, height: number): Buffer {
  const b = Buffer.alloc(8 + 2 + 2 * 12 + 4);
  b.write('II*\u0000', 0, 'latin1');
  b.writeUInt32LE(8, 4);
  b.writeUInt16LE(2, 8);
  [[256, width], [257, height]].forEach(([tag, value], i) => {
    const at = 10 + i * 12;
    b.writeUInt16LE(tag!, at);
    b.writeUInt16LE(4, at + 2);
    b.writeUInt32LE(1, at + 4);
    b.writeUInt32LE(value!, at + 8);
  });
  return b;
}

describe('Azure Image Analysis POST /computervision/imageanalysis:analyze', () => {
  it('answers exactly the requested features for a PNG, with its size and the bytes\' digest', async () => {
    const bytes = png(320, 240, 5);
    const id = createHash('sha256').update(bytes).digest('hex').slice(0, 8);
    const res = await analyze(bytes, { features: 'caption,read,tags' });
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(['captionResult', 'metadata', 'modelVersion', 'readResult', 'tagsResult']);
    expect(res.json.metadata).toEqual({ width: 320, height: 240 });
    expect(res.json.modelVersion).toBe('2023-10-01');
    expect(res.json.captionResult.text).toBe(`a man standing in front of a grey wall (${id})`);
    expect(res.json.readResult.blocks[0].lines[0].text).toBe(`SIM ${id}`);
    expect(res.json.tagsResult.values.map((t: { name: string }) => t.name)).toEqual(['wall', 'indoor', 'grey']);
    // Deterministic per image; another image, another digest.
    expect((await analyze(bytes, { features: 'caption,read,tags' })).json).toEqual(res.json);
    expect((await analyze(png(320, 240, 6), { features: 'caption' })).json.captionResult.text).not.toContain(id);
  });

  it('reads the size of JPEG, TIFF and PNG images and honours the options', async () => {
    const j = await analyze(jpeg(200, 120), { features: 'smartCrops,people,objects', 'smartcrops-aspect-ratios': '1,1.5' });
    expect(j.status, JSON.stringify(j.json)).toBe(200);
    expect(j.json.metadata).toEqual({ width: 200, height: 120 });
    expect(j.json.smartCropsResult.values).toEqual([
      { aspectRatio: 1, boundingBox: { x: 40, y: 0, w: 120, h: 120 } },
      { aspectRatio: 1.5, boundingBox: { x: 10, y: 0, w: 180, h: 120 } },
    ]);
    expect(j.json.peopleResult.values).toHaveLength(1);
    expect(j.json.objectsResult.values[0].tags[0].name).toBe('person');
    expect((await analyze(tiff(640, 480), { features: 'tags' })).json.metadata).toEqual({ width: 640, height: 480 });
    const neutral = await analyze(png(60, 60), { features: 'caption', 'gender-neutral-caption': 'true', language: 'en', 'model-version': '2023-10-01' });
    expect(neutral.json.captionResult.text).toMatch(/^a person standing/);
    // No ratio asked: one region at the image's own ratio, within 0.5 to 2.0.
    expect((await analyze(png(400, 100), { features: 'smartCrops' })).json.smartCropsResult.values).toEqual([{ aspectRatio: 2, boundingBox: { x: 100, y: 0, w: 200, h: 100 } }]);
  });

  it('answers 404 for a missing or other api-version', async () => {
    for (const version of ['', '2024-02-01']) {
      const res = await analyze(png(64, 64), { 'api-version': version, features: 'tags' });
      expect(res.status).toBe(404);
      expect(res.json.error.message).toMatch(/api-version/);
    }
  });

  it('answers 400 InvalidRequest for a bad query, naming what is wrong', async () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{}, /'features' is required/],
      [{ features: 'tags,faces' }, /'faces' is not supported/],
      [{ features: 'caption', 'gender-neutral-caption': 'yes' }, /gender-neutral-caption/],
      [{ features: 'smartCrops', 'smartcrops-aspect-ratios': '0.5' }, /0.75 to 1.8/],
      [{ features: 'tags', language: 'e' }, /language/],
      [{ features: 'tags', 'model-version': 'newest' }, /model-version/],
    ];
    for (const [query, message] of cases) {
      const res = await analyze(png(64, 64), query);
      expect([res.status, res.headers['x-ms-error-code'], res.json.error.code], JSON.stringify(query)).toEqual([400, 'InvalidRequest', 'InvalidRequest']);
      expect(res.json.error.message).toMatch(message);
    }
  });

  it('takes only raw bytes: a JSON {url} body is a 400, another content type a 415', async () => {
    const url = await analyze(JSON.stringify({ url: 'https://example.com/a.png' }), { features: 'tags' }, { 'content-type': 'application/json' });
    expect([url.status, url.json.error.innererror.code]).toEqual([400, 'InvalidImageUrl']);
    expect((await analyze(png(64, 64), { features: 'tags' }, { 'content-type': 'image/png' })).status).toBe(415);
  });

  it('refuses what is not an image the service takes', async () => {
    const cases: Array<[Buffer, string, RegExp]> = [
      [await pdfOf(1), 'InvalidImageFormat', /format is not supported/],
      [png(49, 64), 'InvalidImageSize', /smaller than 50 and larger than 16000/],
      [png(16_001, 50), 'InvalidImageSize', /smaller than 50/],
      [Buffer.alloc(0), 'InvalidImageFormat', /not allowed to be zero or larger than 20971520 bytes/],
    ];
    for (const [bytes, code, message] of cases) {
      const res = await analyze(bytes, { features: 'tags' });
      expect([res.status, res.json.error.innererror?.code], code).toEqual([400, code]);
      expect(res.json.error.message).toMatch(message);
    }
  });

  it('accepts a key header, refuses an empty one', async () => {
    const headers = { 'content-type': 'application/octet-stream' };
    expect((await analyze(png(64, 64), { features: 'tags' }, { ...headers, 'ocp-apim-subscription-key': 'xyz-test-not-real' })).status).toBe(200);
    const empty = await analyze(png(64, 64), { features: 'tags' }, { ...headers, 'ocp-apim-subscription-key': ' ' });
    expect([empty.status, empty.json.error.code]).toEqual([401, '401']);
  });

  it('takes faults scoped by azure-image-analysis', async () => {
    await request(`${sim.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'azure-image-analysis', fault: { status: 503, times: 1 } }) }).then((r) => r.body.dump());
    const failed = await analyze(png(64, 64), { features: 'tags' });
    expect([failed.status, failed.json.error.code]).toEqual([503, 'ServiceUnavailable']);
    expect((await analyze(png(64, 64), { features: 'tags' })).status).toBe(200);
  });
});
