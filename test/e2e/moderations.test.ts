/**
 * POST /v1/moderations end to end (issue 9; spec 4.11): real HTTP through the gateway to the simulator
 * playing Azure AI Content Safety `text:analyze`. One record per call whatever the text's length or the
 * categories scored, billed exactly and reported in X-Gateway-Records and X-Gateway-Cost-USD; the
 * route's default offering when `model` is absent; exactly one of text, image, file_id (images and
 * files: test/e2e/moderations-image.test.ts); bad input a 400 naming the parameter with nothing
 * reserved or charged; an upstream failure charges nothing.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched, postJson, type JsonAnswer } from '../helpers/native.js';

type Answer = JsonAnswer;

/** The route's response schema (the OpenAPI document's): every 200 answer must satisfy it. */
const validResponse = new Ajv2020({ strict: false }).compile(JSON.parse(readFileSync(join(projectRoot(), 'schemas/native-json/moderation-response.json'), 'utf8')));

/** $0.38 per 1,000 records: one record is $0.00038. */
const RECORD_NANO = 380_000n;

describeStore(`moderations (${storeKind})`, () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });
  beforeEach(async () => { await t.clearFaults(); });

  const moderate = (key: string, body: unknown): Promise<Answer> => postJson(t, '/v1/moderations', key, body, (a) => {
    if (a.status === 200) expect(validResponse(a.json), JSON.stringify(validResponse.errors)).toBe(true);
  });
  const lastUpstream = async (): Promise<{ path: string; body: any }> => (await fetch(`${t.sim.url}/__sim/last`)).json() as Promise<{ path: string; body: any }>;
  const untouched = (account: { id: string }, balanceNano: bigint): Promise<void> => expectUntouched(t, account, balanceNano);

  it('scores the requested categories and bills one record exactly, on the default offering', async () => {
    const account = await t.account('1');
    const a = await moderate(account.key, { text: 'I will attack them and I hate them.', categories: ['Hate', 'Violence'] });
    expect(a.status).toBe(200);
    // The simulator's severities count trigger words ("hate", "attack"): one each is severity 2.
    expect(a.json).toEqual({
      object: 'moderation', model: 'content-safety-text',
      categories_analysis: [{ category: 'Hate', severity: 2 }, { category: 'Violence', severity: 2 }],
      usage: { records: 1 },
    });
    expect(await lastUpstream()).toMatchObject({ path: '/contentsafety/text:analyze', body: { text: 'I will attack them and I hate them.', categories: ['Hate', 'Violence'] } });
    expect(a.headers.get('x-gateway-records')).toBe('1');
    expect(a.headers.get('x-gateway-cost-usd')).toBe('0.00038');
    const rows = (await t.usage(account.id)).data;
    expect(rows.map((r) => ({ kind: r.kind, unit: r.unit, quantity: r.quantity, amount: r.amountNano, model: r.model, requestId: r.requestId }))).toEqual([
      { kind: 'moderations', unit: 'record', quantity: 1n, amount: RECORD_NANO, model: 'content-safety-text', requestId: a.headers.get('x-request-id') },
    ]);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 1_000_000_000n - RECORD_NANO, heldNano: 0n, openHolds: 0 });
  });

  it('scores all four categories when none are named, and bills one record for the longest text (10,000 code points)', async () => {
    const account = await t.account('1');
    const a = await moderate(account.key, { model: 'content-safety-text', text: 'A calm afternoon in the park.' });
    expect(a.status).toBe(200);
    expect(a.json.categories_analysis).toEqual(['Hate', 'SelfHarm', 'Sexual', 'Violence'].map((category) => ({ category, severity: 0 })));
    expect((await lastUpstream()).body).toEqual({ text: 'A calm afternoon in the park.' });
    // 10,000 emoji: 10,000 code points (the vendor's limit) in 20,000 UTF-16 units; still one record.
    const longest = await moderate(account.key, { text: '\u{1F44D}'.repeat(10_000) });
    expect(longest.status, JSON.stringify(longest.json)).toBe(200);
    expect(longest.json.usage).toEqual({ records: 1 });
    const rows = (await t.usage(account.id)).data;
    expect(rows.map((r) => [r.quantity, r.amountNano])).toEqual([[1n, RECORD_NANO], [1n, RECORD_NANO]]);
  });

  it('refuses bad input with a 400 naming the parameter, reserving and charging nothing', async () => {
    const account = await t.account('1');
    const cases: Array<[unknown, string, string, RegExp?]> = [
      [{}, 'invalid_request', 'text', /exactly one of 'text', 'image' or 'file_id'/],
      [{ categories: ['Hate'] }, 'invalid_request', 'text', /exactly one of 'text', 'image' or 'file_id'/],
      [{ text: 'hi', image: 'aGk=' }, 'invalid_request', 'image', /this request has 'text' and 'image'/],
      [{ text: 'hi', file_id: 'file_gw_1' }, 'invalid_request', 'file_id', /this request has 'text' and 'file_id'/],
      [{ image: 'aGk=', file_id: 'file_gw_1' }, 'invalid_request', 'file_id', /this request has 'image' and 'file_id'/],
      [{ image: 'data:image/png;base64,aGk=' }, 'invalid_request', 'image', /'image' is not a PNG, JPEG, GIF, BMP, TIFF or WEBP image/],
      [{ file_id: 'file_gw_1' }, 'invalid_request', 'file_id', /Invalid 'file_id'/],
      [{ text: '' }, 'invalid_request', 'text'],
      [{ text: 42 }, 'invalid_request', 'text'],
      [{ text: 'x'.repeat(10_001) }, 'invalid_request', 'text'],
      [{ text: '\u{1F44D}'.repeat(10_001) }, 'invalid_request', 'text'],
      [{ image: 7 }, 'invalid_request', 'image'],
      [{ text: 'hi', categories: [] }, 'invalid_request', 'categories'],
      [{ text: 'hi', categories: 'Hate' }, 'invalid_request', 'categories'],
      [{ text: 'hi', categories: ['Hate', 'Hate'] }, 'invalid_request', 'categories'],
      [{ text: 'hi', categories: ['Spam'] }, 'invalid_request', 'categories.0'],
      [{ text: 'hi', outputType: 'EightSeverityLevels' }, 'invalid_request', 'outputType'],
    ];
    for (const [body, code, param, message] of cases) {
      const a = await moderate(account.key, body);
      expect(a.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(a.json.error.code, JSON.stringify(a.json)).toBe(code);
      expect(a.json.error.param, JSON.stringify(a.json)).toBe(param);
      if (message) expect(a.json.error.message).toMatch(message);
    }
    const wrongModel = await moderate(account.key, { model: 'rerank-pro', text: 'hi' });
    expect(wrongModel.status).toBe(400);
    expect(wrongModel.json.error).toMatchObject({ code: 'model_not_available', param: 'model' });
    expect((await moderate(account.key, { model: 'no-such-model', text: 'hi' })).json.error).toMatchObject({ code: 'model_not_found', param: 'model' });
    await untouched(account, 1_000_000_000n);
  });

  it('charges nothing when the vendor fails or answers garbage, and refuses what the balance cannot hold', async () => {
    const account = await t.account('1');
    await t.fault({ status: 503 }, 'azure-content-safety');
    expect((await moderate(account.key, { text: 'hi' })).status).toBe(502);
    await t.clearFaults();
    await t.fault({ status: 400 }, 'azure-content-safety');
    const rejected = await moderate(account.key, { text: 'hi' });
    expect(rejected.status).toBe(400);
    expect(rejected.json.error.code).toBe('invalid_request');
    await t.clearFaults();
    await t.fault({ error_after_chunks: 1 }, 'azure-content-safety');
    expect((await moderate(account.key, { text: 'hi' })).status).toBe(502);
    await t.clearFaults();
    await untouched(account, 1_000_000_000n);

    const poor = await t.account('0.0003');
    const refused = await moderate(poor.key, { text: 'hi' });
    expect(refused.status).toBe(402);
    expect(refused.json.error.message).toBe('Insufficient balance: this request needs $0.00038 reserved (1 record at $0.38 per 1000); $0.0003 is available. Top up.');
    await untouched(poor, 300_000n);
  });

  // OpenAI's free moderation model (issue 31 item 10; test/e2e/moderations-openai.test.ts) is one of them.
  it('lists the moderation offerings (text records and images, priced apart; OpenAI\'s omni model) under ?service_type=moderation', async () => {
    const account = await t.account('0');
    const res = await fetch(`${t.url}/v1/models?service_type=moderation`, { headers: { authorization: `Bearer ${account.key}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual(['content-safety-text', 'content-safety-image', 'omni-moderation-latest']);
  });
});
