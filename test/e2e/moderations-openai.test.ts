/**
 * POST /v1/moderations in OpenAI's own shape (issue 31 item 10): a body with `input` (a text, texts,
 * or text and image parts) is served by omni-moderation-latest on the simulator playing OpenAI's
 * createModeration, and answered in OpenAI's shape; the spec's shape (text, image, file_id; spec 4.11,
 * test/e2e/moderations.test.ts) is untouched. OpenAI's moderation is free: one record per call
 * (spec 1) is written at $0, and X-Gateway-Cost-USD says 0. A shape the model cannot take is a 400
 * naming the offering that can, with nothing reserved or charged.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched, postJson, type JsonAnswer } from '../helpers/native.js';

const validResponse = new Ajv2020({ strict: false }).compile(JSON.parse(readFileSync(join(projectRoot(), 'schemas/native-json/moderation-response.json'), 'utf8')));

describeStore(`moderations in OpenAI's shape (${storeKind})`, () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });
  beforeEach(async () => { await t.clearFaults(); });

  const moderate = (key: string, body: unknown): Promise<JsonAnswer> => postJson(t, '/v1/moderations', key, body, (a) => {
    if (a.status === 200) expect(validResponse(a.json), JSON.stringify(validResponse.errors)).toBe(true);
  });
  const lastUpstream = async (): Promise<{ path: string; body: any }> => (await fetch(`${t.sim.url}/__sim/last`)).json() as Promise<{ path: string; body: any }>;

  it('answers a text, texts and image parts in OpenAI\'s shape, one $0 record per call, the cost header 0', async () => {
    const account = await t.account('1');
    const one = await moderate(account.key, { model: 'omni-moderation-latest', input: 'I want to hug everyone.' });
    expect(one.status, JSON.stringify(one.json)).toBe(200);
    expect(one.json).toMatchObject({ id: expect.stringMatching(/^modr-/), model: 'omni-moderation-latest' });
    expect(one.json.results).toHaveLength(1);
    expect(one.json.results[0]).toMatchObject({ flagged: false, categories: { violence: false }, category_applied_input_types: { violence: ['text'] } });
    expect(await lastUpstream()).toEqual(expect.objectContaining({ path: '/v1/moderations', body: { model: 'omni-moderation-latest', input: 'I want to hug everyone.' } }));
    expect([one.headers.get('x-gateway-records'), one.headers.get('x-gateway-cost-usd')]).toEqual(['1', '0']);

    // No model: the request's shape picks the offering that takes it.
    const two = await moderate(account.key, { input: ['Have a nice day.', 'I will kill them.'] });
    expect(two.status, JSON.stringify(two.json)).toBe(200);
    expect(two.json.model).toBe('omni-moderation-latest');
    expect(two.json.results.map((r: { flagged: boolean }) => r.flagged)).toEqual([false, true]);

    const parts = await moderate(account.key, { model: 'omni-moderation-latest', input: [{ type: 'text', text: 'A cat.' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] });
    expect(parts.status, JSON.stringify(parts.json)).toBe(200);
    expect(parts.json.results[0].category_applied_input_types).toMatchObject({ violence: ['text', 'image'], hate: ['text'] });

    const rows = (await t.usage(account.id)).data;
    expect(rows.map((r) => [r.kind, r.model, r.unit, r.quantity, r.amountNano])).toEqual(
      [0, 1, 2].map(() => ['moderations', 'omni-moderation-latest', 'record', 1n, 0n]));
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 1_000_000_000n, heldNano: 0n, openHolds: 0 });
  });

  it('refuses a shape the model cannot take, and the spec\'s fields mixed into OpenAI\'s, naming the parameter; nothing reserved or charged', async () => {
    const account = await t.account('1');
    const cases: Array<[unknown, string, string, RegExp]> = [
      [{ model: 'content-safety-text', input: 'hi' }, 'invalid_request', 'model', /use "omni-moderation-latest"/],
      [{ model: 'omni-moderation-latest', text: 'hi' }, 'invalid_request', 'model', /use "content-safety-text"/],
      [{ model: 'omni-moderation-latest', input: 'hi', categories: ['Hate'] }, 'unsupported_parameter', 'categories', /not accepted with 'input'/],
      [{ input: 'hi', text: 'hi' }, 'unsupported_parameter', 'text', /not accepted with 'input'/],
      [{ input: [] }, 'invalid_request', 'input', /input/],
      [{ input: [{ type: 'image_url' }] }, 'invalid_request', 'input', /input/],
    ];
    for (const [body, code, param, message] of cases) {
      const a = await moderate(account.key, body);
      expect([a.status, a.json.error?.code, a.json.error?.param], JSON.stringify(body)).toEqual([400, code, param]);
      expect(a.json.error.message, JSON.stringify(body)).toMatch(message);
    }
    await expectUntouched(t, account, 1_000_000_000n);
  });
});
