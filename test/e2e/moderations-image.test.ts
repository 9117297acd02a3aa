/**
 * POST /v1/moderations with an image (issue 10 item 5; spec 2, 4.7, 4.11): real HTTP through the
 * gateway to the simulator playing Azure AI Content Safety `image:analyze`. The image comes as base64,
 * as a data URL, or as a finalized temporary file of purpose MODERATION_INPUT (uploaded here with the
 * three steps of spec 4.7); each call is one record, billed at the image offering's rate (the vendor
 * prices images apart from text records) and reported in X-Gateway-Records and X-Gateway-Cost-USD, in
 * the same response shape as text. A request without `model` gets the image offering; the text
 * offering with an image is a 400 naming the image one. A file of another purpose, another account's
 * file, a pending file, two inputs or none, and an image the vendor cannot take are 4xx with nothing
 * reserved or charged.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/images.js';
import { expectUntouched, postJson, type JsonAnswer } from '../helpers/native.js';

const validResponse = new Ajv2020({ strict: false }).compile(JSON.parse(await readFile(join(projectRoot(), 'schemas/native-json/moderation-response.json'), 'utf8')));

/** content-safety-image: $0.75 per 1,000 records, one per image (spec 1): one record is $0.00075. */
const RECORD_NANO = 750_000n;
const FULL = 1_000_000_000n;

describeStore(`moderations of images (${storeKind})`, () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });
  beforeEach(async () => { await t.clearFaults(); });

  const moderate = (key: string, body: unknown): Promise<JsonAnswer> => postJson(t, '/v1/moderations', key, body, (a) => {
    if (a.status === 200) expect(validResponse(a.json), JSON.stringify(validResponse.errors)).toBe(true);
  });
  const lastUpstream = async (): Promise<{ path: string; body: any }> => (await fetch(`${t.sim.url}/__sim/last`)).json() as Promise<{ path: string; body: any }>;

  /** Spec 4.7: authorize, PUT with exactly the returned method and headers, finalize (unless `finalize` is false). */
  async function temporaryFile(key: string, purpose: string, bytes: Buffer, finalize = true): Promise<string> {
    const a = await postJson(t, '/v1/gateway/files/upload-authorizations', key, { purpose, content_type: 'image/png', byte_size: bytes.length });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    const put = await fetch(a.json.upload_url, { method: a.json.method, headers: a.json.headers, body: new Uint8Array(bytes) });
    expect(put.status).toBe(200);
    if (finalize) expect((await postJson(t, `/v1/gateway/files/${a.json.file_id}/finalize`, key, undefined)).status).toBe(200);
    return a.json.file_id as string;
  }

  /** One record billed: the headers, the usage row and the balance. */
  async function expectOneRecord(account: { id: string }, a: JsonAnswer, rows = 1): Promise<void> {
    expect(a.json.usage).toEqual({ records: 1 });
    expect(a.headers.get('x-gateway-records')).toBe('1');
    expect(a.headers.get('x-gateway-cost-usd')).toBe('0.00075');
    const usage = (await t.usage(account.id)).data;
    expect(usage).toHaveLength(rows);
    expect(usage.find((r) => r.requestId === a.headers.get('x-request-id'))).toMatchObject({ kind: 'moderations', unit: 'record', quantity: 1n, amountNano: RECORD_NANO, model: 'content-safety-image' });
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: FULL - BigInt(rows) * RECORD_NANO, heldNano: 0n, openHolds: 0 });
  }

  it('scores a base64 image on image:analyze in the text answer\'s shape, one record billed', async () => {
    const account = await t.account('1');
    const image = png(64, 64, 8).toString('base64');
    const a = await moderate(account.key, { image });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    // The simulator's severities follow the image's bytes (seed 8: 2, 6, 4, 2).
    expect(a.json).toEqual({
      object: 'moderation', model: 'content-safety-image', usage: { records: 1 },
      categories_analysis: [{ category: 'Hate', severity: 2 }, { category: 'SelfHarm', severity: 6 }, { category: 'Sexual', severity: 4 }, { category: 'Violence', severity: 2 }],
    });
    expect(await lastUpstream()).toMatchObject({ path: '/contentsafety/image:analyze', body: { image: { content: image } } });
    await expectOneRecord(account, a);
  });

  it('takes a data URL (prefix stripped upstream) with categories', async () => {
    const account = await t.account('1');
    const image = png(80, 60, 8).toString('base64');
    const a = await moderate(account.key, { model: 'content-safety-image', image: `data:image/png;base64,${image}`, categories: ['Violence'] });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    expect(a.json.categories_analysis.map((c: { category: string }) => c.category)).toEqual(['Violence']);
    expect((await lastUpstream()).body).toEqual({ image: { content: image }, categories: ['Violence'] });
    await expectOneRecord(account, a);
  });

  it('refuses the text offering with an image (400 naming the image offering) and the image offering with text, nothing reserved', async () => {
    const account = await t.account('1');
    const image = png(64, 64, 8).toString('base64');
    const wrong = await moderate(account.key, { model: 'content-safety-text', image });
    expect([wrong.status, wrong.json.error?.code, wrong.json.error?.param], JSON.stringify(wrong.json)).toEqual([400, 'invalid_request', 'model']);
    expect(wrong.json.error.message).toBe('The model "content-safety-text" cannot take this request\'s input on /v1/moderations; use "content-safety-image" instead.');
    const fileId = await temporaryFile(account.key, 'MODERATION_INPUT', png(64, 64, 8));
    expect((await moderate(account.key, { model: 'content-safety-text', file_id: fileId })).json.error?.message).toMatch(/use "content-safety-image" instead/);
    const text = await moderate(account.key, { model: 'content-safety-image', text: 'hi' });
    expect([text.status, text.json.error?.message]).toEqual([400, 'The model "content-safety-image" cannot take this request\'s input on /v1/moderations; use "content-safety-text" instead.']);
    await expectUntouched(t, account, FULL);
  });

  it('takes a finalized MODERATION_INPUT file_id: the same answer and bill as the same image inline', async () => {
    const account = await t.account('1');
    const bytes = png(64, 64, 8);
    const fileId = await temporaryFile(account.key, 'MODERATION_INPUT', bytes);
    const a = await moderate(account.key, { file_id: fileId, categories: ['Hate', 'SelfHarm'] });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    expect(a.json.categories_analysis).toEqual([{ category: 'Hate', severity: 2 }, { category: 'SelfHarm', severity: 6 }]);
    expect(await lastUpstream()).toMatchObject({ path: '/contentsafety/image:analyze', body: { image: { content: bytes.toString('base64') }, categories: ['Hate', 'SelfHarm'] } });
    await expectOneRecord(account, a);
    // Any key of the same account may use it (spec 2), again and again while it lives.
    const { key: second } = await t.gw.runtime.ledger.createKey(account.id);
    expect((await moderate(second, { file_id: fileId })).status).toBe(200);
    expect((await t.usage(account.id)).data.map((r) => r.quantity)).toEqual([1n, 1n]);
  });

  it('refuses a file of another purpose (400), another account\'s or an unknown file (404), a pending file (400), with nothing reserved', async () => {
    const account = await t.account('1');
    const other = await t.account('1');
    const bytes = png(64, 64, 3);
    const vision = await temporaryFile(account.key, 'VISION_INPUT', bytes);
    const theirs = await temporaryFile(other.key, 'MODERATION_INPUT', bytes);
    const pending = await temporaryFile(account.key, 'MODERATION_INPUT', bytes, false);
    const cases: Array<[string, number, string]> = [
      [vision, 400, 'file_purpose_mismatch'],
      [theirs, 404, 'file_not_found'],
      ['tfile_000000000000000000000000', 404, 'file_not_found'],
      [pending, 400, 'file_not_finalized'],
    ];
    for (const [fileId, status, code] of cases) {
      const a = await moderate(account.key, { file_id: fileId });
      expect([a.status, a.json.error?.code], JSON.stringify(a.json)).toEqual([status, code]);
    }
    expect((await moderate(account.key, { file_id: vision })).json.error.message).toMatch(/uploaded for VISION_INPUT; this endpoint takes MODERATION_INPUT/);
    await expectUntouched(t, account, FULL);
  });

  it('refuses two inputs or none, and an image the vendor cannot take, with a 400 naming the parameter and nothing reserved', async () => {
    const account = await t.account('1');
    const image = png(64, 64).toString('base64');
    const tooSmall = await readFile(join(projectRoot(), 'test/fixtures/files/sample.png'));
    const smallFile = await temporaryFile(account.key, 'MODERATION_INPUT', tooSmall);
    const cases: Array<[unknown, string, RegExp]> = [
      [{}, 'text', /^Missing input: provide exactly one of 'text', 'image' or 'file_id'\.$/],
      [{ categories: ['Hate'] }, 'text', /exactly one of 'text', 'image' or 'file_id'/],
      [{ text: 'hi', image }, 'image', /^Provide exactly one of 'text', 'image' or 'file_id'; this request has 'text' and 'image'\.$/],
      [{ text: 'hi', file_id: smallFile }, 'file_id', /this request has 'text' and 'file_id'/],
      [{ image, file_id: smallFile }, 'file_id', /this request has 'image' and 'file_id'/],
      [{ text: 'hi', image, file_id: smallFile }, 'image', /this request has 'text', 'image' and 'file_id'/],
      [{ image: 'not base64!' }, 'image', /'image' is not valid base64/],
      [{ image: 'data:image/png,%89PNG' }, 'image', /not valid base64/],
      [{ image: Buffer.from('%PDF-1.7').toString('base64') }, 'image', /not a PNG, JPEG, GIF, BMP, TIFF or WEBP image/],
      [{ image: Buffer.concat([png(64, 64), Buffer.alloc(4 * 1024 * 1024)]).toString('base64') }, 'image', /the limit is 4194304 bytes/],
      [{ image: tooSmall.toString('base64') }, 'image', /2 x 2 pixels; it must be from 50 x 50 to 2048 x 2048/],
      // A finalized file the vendor cannot take is refused as its image, before anything is reserved.
      [{ file_id: smallFile }, 'image', /2 x 2 pixels/],
      [{ file_id: 'file_gw_1' }, 'file_id', /Invalid 'file_id'/],
      [{ image: 7 }, 'image', /Invalid 'image'/],
    ];
    for (const [body, param, message] of cases) {
      const a = await moderate(account.key, body);
      expect(a.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect([a.json.error.code, a.json.error.param], JSON.stringify(a.json)).toEqual(['invalid_request', param]);
      expect(a.json.error.message).toMatch(message);
    }
    await expectUntouched(t, account, FULL);
  });

  it('charges nothing when image analysis fails upstream', async () => {
    const account = await t.account('1');
    await t.fault({ status: 503 }, 'azure-content-safety');
    expect((await moderate(account.key, { image: png(64, 64).toString('base64') })).status).toBe(502);
    await t.clearFaults();
    await t.fault({ status: 429 }, 'azure-content-safety');
    expect((await moderate(account.key, { image: png(64, 64).toString('base64') })).status).toBe(429);
    await expectUntouched(t, account, FULL);
  });
});
