/**
 * POST /v1/vision/analyze (issue 12; spec 1, 2, 4.12, 7): real HTTP through the gateway to the
 * simulator playing Azure AI Vision Image Analysis 4.0. Every input method (base64, data URL, a URL
 * served from loopback through `url_inputs.allow_hosts`, a finalized VISION_INPUT file) reaches the
 * vendor as the same raw bytes (the simulator's caption carries their digest); `features` as an array
 * or a comma-separated string, duplicates once; billed one transaction per selected feature, exact to
 * the nano-dollar, in X-Gateway-Features and X-Gateway-Cost-USD. Refused with nothing reserved: none or
 * two inputs, an unknown feature, a non-image, refused URLs (loopback not allowed, a redirect to a
 * refused host, a name resolving to a private address), another account's file, the wrong purpose, a
 * pending or an expired file; an upstream failure charges nothing.
 */
import { createHash } from 'node:crypto';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, beforeEach, expect, it, type MockInstance } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { projectRoot } from '../../src/paths.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { pdfOf } from '../helpers/documents.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/images.js';
import { jpeg } from '../helpers/jpeg.js';
import { expectUntouched, postJson, type JsonAnswer } from '../helpers/native.js';
import { spyOnConnect, startCanary, startServer, tableResolver, type Canary, type TestServer } from '../upstream/fetch/servers.js';

const validResponse = new Ajv2020({ strict: false }).compile(JSON.parse(await readFile(join(projectRoot(), 'schemas/native-json/vision-analyze-response.json'), 'utf8')));

/** $1.50 per 1,000 features: one feature is $0.0015 (the provider's placeholder price). */
const FEATURE_NANO = 1_500_000n;
const FULL = 1_000_000_000n;
/** Names the injected resolver maps to addresses the fetcher refuses (a private one and loopback). */
const PRIVATE_NAME = 'images.intranet.test';
const LOOPBACK_NAME = 'cdn.loopback.test';

/** The first 8 hex digits of the SHA-256 of `bytes`: the simulator puts them in the caption. */
const digest = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex').slice(0, 8);

describeStore(`vision analysis (${storeKind})`, () => {
  let t: TestGateway;
  let copy: ConfigCopy;
  let canary: Canary;
  let allowed: TestServer;
  const clock = new ManualClock();
  const resolver = tableResolver({ [PRIVATE_NAME]: ['10.20.30.40'], [LOOPBACK_NAME]: ['127.0.0.1'] });
  const photo = png(320, 240, 42);
  const photoJpeg = jpeg(200, 150);

  beforeAll(async () => {
    canary = await startCanary();
    allowed = await startServer({
      '/photo.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(photo),
      '/photo.jpg': (_req, res) => res.writeHead(200, { 'content-type': 'image/jpeg' }).end(photoJpeg),
      // A server lying about its type: the bytes are sniffed, never the header.
      '/report.png': (_req, res) => { void pdfOf(1).then((pdf) => res.writeHead(200, { 'content-type': 'image/png' }).end(pdf)); },
      '/to-canary': (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${canary.port}/photo.png` }).end(),
    });
    copy = await copyConfig();
    await copy.editYaml('gateway.config.yaml', (doc) => { doc.url_inputs = { allow_hosts: [`127.0.0.1:${allowed.port}`] }; });
    t = await startTestGateway({ configFile: copy.configFile, resolver, clock });
  });
  afterAll(async () => {
    await t?.dispose();
    await canary?.close();
    await allowed?.close();
    if (copy) await rm(copy.dir, { recursive: true, force: true });
  });
  beforeEach(async () => { await t.clearFaults(); });

  const analyze = (key: string, body: unknown): Promise<JsonAnswer> => postJson(t, '/v1/vision/analyze', key, body, (a) => {
    if (a.status === 200) expect(validResponse(a.json), JSON.stringify(validResponse.errors)).toBe(true);
  });

  /** Spec 4.7: authorize, PUT with exactly the returned method and headers, finalize (unless `finalize` is false). */
  async function temporaryFile(key: string, purpose: string, bytes: Buffer, contentType = 'image/png', finalize = true): Promise<string> {
    const a = await postJson(t, '/v1/gateway/files/upload-authorizations', key, { purpose, content_type: contentType, byte_size: bytes.length });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    const put = await fetch(a.json.upload_url, { method: a.json.method, headers: a.json.headers, body: new Uint8Array(bytes) });
    expect(put.status).toBe(200);
    if (finalize) expect((await postJson(t, `/v1/gateway/files/${a.json.file_id}/finalize`, key, undefined)).status).toBe(200);
    return a.json.file_id as string;
  }

  /** `features` transactions billed for the answer (its headers and usage row); the account has spent `spentNano` in all, holding nothing. */
  async function expectBilled(account: { id: string }, a: JsonAnswer, features: number, spentNano: bigint): Promise<void> {
    const amount = BigInt(features) * FEATURE_NANO;
    expect(a.json.usage).toEqual({ features });
    expect(a.headers.get('x-gateway-features')).toBe(String(features));
    expect(a.headers.get('x-gateway-cost-usd')).toBe((Number(amount) / 1e9).toString());
    const usage = (await t.usage(account.id)).data;
    expect(usage.find((r) => r.requestId === a.headers.get('x-request-id'))).toMatchObject({ kind: 'vision-analyze', unit: 'feature', quantity: BigInt(features), amountNano: amount, model: 'image-analysis' });
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: FULL - spentNano, heldNano: 0n, openHolds: 0 });
  }

  it('bills three features as three transactions, exact to the nano-dollar', async () => {
    const account = await t.account('1');
    const a = await analyze(account.key, { image: photo.toString('base64'), features: ['caption', 'read', 'tags'] });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    expect(a.json).toMatchObject({ object: 'vision.analysis', model: 'image-analysis', model_version: '2023-10-01', metadata: { width: 320, height: 240 } });
    expect(Object.keys(a.json).filter((k) => ['caption', 'read', 'tags', 'objects', 'people', 'smart_crops'].includes(k))).toEqual(['caption', 'read', 'tags']);
    expect(a.json.caption.text).toBe(`a man standing in front of a grey wall (${digest(photo)})`);
    expect(a.json.read.text).toBe(`SIM ${digest(photo)}`);
    expect(a.json.tags.map((tag: { name: string }) => tag.name)).toEqual(['wall', 'indoor', 'grey']);
    // 3 x $0.0015 = $0.0045 = 4,500,000 nano-USD.
    expect(a.headers.get('x-gateway-cost-usd')).toBe('0.0045');
    await expectBilled(account, a, 3, 4_500_000n);
    const rows = (await t.usage(account.id)).data;
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ unit: 'feature', quantity: 3n, amountNano: 4_500_000n });
  });

  it('takes features as a comma-separated string, duplicates counted once, with the options mapped', async () => {
    const account = await t.account('1');
    const a = await analyze(account.key, {
      image: `data:image/png;base64,${photo.toString('base64')}`, features: 'smartCrops, caption,smartCrops,people,caption',
      gender_neutral_caption: true, smartcrops_aspect_ratios: [1, 1.5], language: 'en', model_version: 'latest',
    });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    expect(a.json.caption.text).toMatch(/^a person standing/);
    expect(a.json.smart_crops).toEqual([
      { aspect_ratio: 1, bounding_box: { x: 40, y: 0, width: 240, height: 240 } },
      { aspect_ratio: 1.5, bounding_box: { x: 0, y: 13, width: 320, height: 213 } },
    ]);
    expect(a.json.people).toHaveLength(1);
    expect(a.json.read).toBeUndefined();
    await expectBilled(account, a, 3, 4_500_000n);
  });

  it('sends every input method to the vendor as the same raw bytes: base64, data URL, URL, file_id; PNG and JPEG', async () => {
    const account = await t.account('1');
    const fileId = await temporaryFile(account.key, 'VISION_INPUT', photo);
    const jpegFile = await temporaryFile(account.key, 'VISION_INPUT', photoJpeg, 'image/jpeg');
    const inputs: Array<[Record<string, unknown>, Buffer]> = [
      [{ image: photo.toString('base64') }, photo],
      [{ image: `data:image/png;base64,${photo.toString('base64')}` }, photo],
      [{ url: `http://127.0.0.1:${allowed.port}/photo.png` }, photo],
      [{ file_id: fileId }, photo],
      [{ image: `data:image/jpeg;base64,${photoJpeg.toString('base64')}` }, photoJpeg],
      [{ url: `http://127.0.0.1:${allowed.port}/photo.jpg` }, photoJpeg],
      [{ file_id: jpegFile }, photoJpeg],
    ];
    let spent = 0n;
    for (const [input, bytes] of inputs) {
      const a = await analyze(account.key, { ...input, features: 'caption' });
      expect(a.status, JSON.stringify(a.json)).toBe(200);
      expect(a.json.caption.text, JSON.stringify(input).slice(0, 60)).toContain(digest(bytes));
      expect(a.json.metadata).toEqual(bytes === photo ? { width: 320, height: 240 } : { width: 200, height: 150 });
      const last = await (await fetch(`${t.sim.url}/__sim/last`)).json() as { path: string; headers: Record<string, string> };
      expect([last.path, last.headers['content-type'], last.headers['content-length']]).toEqual(['/computervision/imageanalysis:analyze', 'application/octet-stream', String(bytes.length)]);
      spent += FEATURE_NANO;
      await expectBilled(account, a, 1, spent);
    }
    expect(allowed.requests.filter((r) => r.url.startsWith('/photo'))).toHaveLength(2);
  });

  it('refuses none or two input methods with a 400 naming the fields, reserving nothing', async () => {
    const account = await t.account('1');
    const image = photo.toString('base64');
    const url = `http://127.0.0.1:${allowed.port}/photo.png`;
    const fetched = allowed.requests.length;
    const cases: Array<[unknown, string, RegExp]> = [
      [{ features: 'tags' }, 'image', /^Missing input: provide exactly one of 'image', 'url' or 'file_id'\.$/],
      [{ image, url, features: 'tags' }, 'url', /^Provide exactly one of 'image', 'url' or 'file_id'; this request has 'image' and 'url'\.$/],
      [{ image, file_id: 'tfile_000000000000000000000000', features: 'tags' }, 'file_id', /this request has 'image' and 'file_id'/],
      [{ url, file_id: 'tfile_000000000000000000000000', features: 'tags' }, 'file_id', /this request has 'url' and 'file_id'/],
      [{ image }, 'features', /Missing required parameter: 'features'/],
    ];
    for (const [body, param, message] of cases) {
      const a = await analyze(account.key, body);
      expect([a.status, a.json.error?.code, a.json.error?.param], JSON.stringify(a.json)).toEqual([400, 'invalid_request', param]);
      expect(a.json.error.message).toMatch(message);
    }
    // Validation comes first: the URL of a request with two inputs is never fetched.
    expect(allowed.requests.length).toBe(fetched);
    await expectUntouched(t, account, FULL);
  });

  it('refuses an unknown feature with a 400 naming it, before anything is reserved or sent', async () => {
    const account = await t.account('1');
    const before = t.sim.requests;
    const cases: Array<[unknown, RegExp]> = [
      [['caption', 'faces'], /^Unsupported feature 'faces' in 'features' \(supported: caption, read, tags, objects, people, smartCrops\)\.$/],
      ['tags,denseCaptions', /'denseCaptions'/],
      ['Tags', /did you mean 'tags'\?/],
    ];
    for (const [features, message] of cases) {
      const a = await analyze(account.key, { image: photo.toString('base64'), features });
      expect([a.status, a.json.error.code, a.json.error.param]).toEqual([400, 'unsupported_parameter', 'features']);
      expect(a.json.error.message).toMatch(message);
    }
    const empty = await analyze(account.key, { image: photo.toString('base64'), features: ' , ' });
    expect([empty.status, empty.json.error.param]).toEqual([400, 'features']);
    const neutral = await analyze(account.key, { image: photo.toString('base64'), features: 'tags', gender_neutral_caption: true });
    expect([neutral.status, neutral.json.error.code, neutral.json.error.param]).toEqual([400, 'unsupported_parameter', 'gender_neutral_caption']);
    expect(t.sim.requests).toBe(before);
    await expectUntouched(t, account, FULL);
  });

  it('refuses a non-image (a PDF) and an image the vendor cannot take, naming the field', async () => {
    const account = await t.account('1');
    const pdf = await pdfOf(1);
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ image: pdf.toString('base64') }, 'image', /the content is application\/pdf; expected image\/jpeg, image\/png/],
      [{ image: `data:image/png;base64,${pdf.toString('base64')}` }, 'image', /application\/pdf/],
      [{ url: `http://127.0.0.1:${allowed.port}/report.png` }, 'url', /application\/pdf/],
      [{ image: png(40, 300).toString('base64') }, 'image', /40 x 300 pixels; it must be from 50 x 50 to 16000 x 16000/],
      [{ image: 'not base64!' }, 'image', /base64/],
    ];
    for (const [input, param, message] of cases) {
      const a = await analyze(account.key, { ...input, features: 'tags' });
      expect([a.status, a.json.error?.param], JSON.stringify(a.json)).toEqual([400, param]);
      expect(a.json.error.message).toMatch(message);
    }
    await expectUntouched(t, account, FULL);
  });

  it('refuses loopback not allowed, a redirect to a refused host and a name resolving to a private address; never connects there', async () => {
    const account = await t.account('1');
    const cases: Array<[string, RegExp]> = [
      [`http://127.0.0.1:${canary.port}/photo.png`, /only https URLs are accepted/],
      [`https://127.0.0.1:${canary.port}/photo.png`, /the URL's host is a loopback address/],
      [`http://127.0.0.1:${allowed.port}/to-canary`, /redirects to a refused URL/],
      [`https://${PRIVATE_NAME}/photo.png`, /the URL's host resolves to a private address/],
      [`https://${LOOPBACK_NAME}:${canary.port}/photo.png`, /the URL's host resolves to a loopback address/],
    ];
    // Refused before any socket opens towards them (the private address is never dialled).
    const connect: MockInstance = spyOnConnect();
    try {
      for (const [url, message] of cases) {
        const a = await analyze(account.key, { url, features: ['caption', 'tags'] });
        expect([a.status, a.json.error?.code, a.json.error?.param], url).toEqual([400, 'invalid_request', 'url']);
        expect(a.json.error.message).toMatch(message);
      }
      const dialled = connect.mock.calls.map((call) => JSON.stringify(call[0]));
      expect(dialled.filter((target) => target.includes('10.20.30.40') || target.includes(String(canary.port)))).toEqual([]);
      // The spy does see the gateway's sockets: the allow-listed host was dialled for the redirect.
      expect(dialled.some((target) => target.includes(String(allowed.port)))).toBe(true);
    } finally {
      connect.mockRestore();
    }
    expect(resolver.calls).toEqual(expect.arrayContaining([PRIVATE_NAME, LOOPBACK_NAME]));
    expect(canary.connections()).toBe(0);
    await expectUntouched(t, account, FULL);
  });

  it('refuses another account\'s file (404), the wrong purpose (400), a pending and an expired file', async () => {
    const account = await t.account('1');
    const other = await t.account('1');
    const theirs = await temporaryFile(other.key, 'VISION_INPUT', photo);
    const moderation = await temporaryFile(account.key, 'MODERATION_INPUT', photo);
    const pending = await temporaryFile(account.key, 'VISION_INPUT', photo, 'image/png', false);
    const cases: Array<[string, number, string, string | null]> = [
      [theirs, 404, 'file_not_found', null],
      ['tfile_000000000000000000000000', 404, 'file_not_found', null],
      [moderation, 400, 'file_purpose_mismatch', 'file_id'],
      [pending, 400, 'file_not_finalized', 'file_id'],
    ];
    for (const [fileId, status, code, param] of cases) {
      const a = await analyze(account.key, { file_id: fileId, features: 'tags' });
      expect([a.status, a.json.error?.code, a.json.error?.param], JSON.stringify(a.json)).toEqual([status, code, param]);
    }
    expect((await analyze(account.key, { file_id: moderation, features: 'tags' })).json.error.message).toMatch(/uploaded for MODERATION_INPUT; this endpoint takes VISION_INPUT/);
    // Spec 8: a finalized temporary file lives 24 hours.
    const expiring = await temporaryFile(account.key, 'VISION_INPUT', photo);
    clock.advance(24 * 3600_000 + 1000);
    const expired = await analyze(account.key, { file_id: expiring, features: 'tags' });
    expect([expired.status, expired.json.error.code]).toEqual([404, 'file_expired']);
    await expectUntouched(t, account, FULL);
  });

  it('charges nothing when the analysis fails upstream', async () => {
    const account = await t.account('1');
    const body = { image: photo.toString('base64'), features: 'caption,tags,objects' };
    await t.fault({ status: 503 }, 'azure-image-analysis');
    expect((await analyze(account.key, body)).status).toBe(502);
    await t.clearFaults();
    await t.fault({ status: 500 }, 'azure-image-analysis');
    expect((await analyze(account.key, body)).status).toBe(502);
    await t.clearFaults();
    await t.fault({ status: 429 }, 'azure-image-analysis');
    const limited = await analyze(account.key, body);
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '7']);
    await t.clearFaults();
    // A body cut with the socket destroyed: the upstream could not be reached (503); a 200 whose JSON
    // stops early is malformed (502).
    await t.fault({ truncate_after_chunks: 2 }, 'azure-image-analysis');
    expect((await analyze(account.key, body)).status).toBe(503);
    await t.clearFaults();
    await t.fault({ error_after_chunks: 2 }, 'azure-image-analysis');
    expect((await analyze(account.key, body)).status).toBe(502);
    await expectUntouched(t, account, FULL);
  });
});
