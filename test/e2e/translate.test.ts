/**
 * POST /v1/translate end to end (issue 9; spec 4.9): the vendor's character count (Translator's
 * x-metered-usage header, every target language counting) billed per 1M characters, the settled
 * quantity and charge in X-Gateway-Characters and X-Gateway-Cost-USD, the route's default offering
 * when `model` is absent, bad input a 400 naming the parameter with nothing reserved or charged.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { describeStore, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched, listedAndCatalogued, postJson, type JsonAnswer } from '../helpers/native.js';

describeStore(`translate (${storeKind})`, () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });
  beforeEach(async () => { await t.clearFaults(); });

  const translate = (key: string, body: unknown): Promise<JsonAnswer> => postJson(t, '/v1/translate', key, body);
  const untouched = (account: { id: string }, balanceNano: bigint): Promise<void> => expectUntouched(t, account, balanceNano);

  it('translates to two languages and bills the characters the vendor charged, each language counting', async () => {
    const account = await t.account('1');
    // 'Hello world' is 11 characters; '👍🏽 ok' 7 as the vendor counts (each emoji a surrogate pair); twice.
    const a = await translate(account.key, { text: ['Hello world', '👍🏽 ok'], to: ['de', 'fr'] });
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ object: 'list', model: 'translator-standard', usage: { characters: 36 } });
    expect(a.json.data.map((d: any) => [d.index, d.translations.map((x: any) => x.to)])).toEqual([[0, ['de', 'fr']], [1, ['de', 'fr']]]);
    expect(a.json.data[0].detected_language).toMatchObject({ language: 'en' });
    expect(a.headers.get('x-gateway-characters')).toBe('36');
    // $10.00 per 1M characters: 36 characters are $0.00036, exactly.
    expect(a.headers.get('x-gateway-cost-usd')).toBe('0.00036');
    const rows = (await t.usage(account.id)).data;
    expect(rows.map((r) => ({ kind: r.kind, unit: r.unit, quantity: r.quantity, amount: r.amountNano, model: r.model }))).toEqual([
      { kind: 'translate', unit: 'character', quantity: 36n, amount: 360_000n, model: 'translator-standard' },
    ]);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 1_000_000_000n - 360_000n, heldNano: 0n, openHolds: 0 });
  });

  it('sends `from` when given (no detection) and takes a single text and language as strings', async () => {
    const account = await t.account('1');
    const a = await translate(account.key, { model: 'translator-standard', text: 'Bonjour', to: 'en', from: 'fr' });
    expect(a.status).toBe(200);
    expect(a.json.data).toEqual([{ index: 0, translations: [{ to: 'en', text: '[en] Bonjour' }] }]);
    expect(a.json.usage).toEqual({ characters: 7 });
    expect((await t.usage(account.id)).data[0]).toMatchObject({ quantity: 7n, amountNano: 70_000n });
  });

  it('refuses bad input with a 400 naming the parameter, reserving and charging nothing', async () => {
    const account = await t.account('1');
    const cases: Array<[unknown, string]> = [
      [{ text: 'hi' }, 'to'],
      [{ to: 'de' }, 'text'],
      [{ text: 'hi', to: 'german!' }, 'to'],
      [{ text: 'hi', to: [] }, 'to'],
      [{ text: [], to: 'de' }, 'text'],
      [{ text: '', to: 'de' }, 'text'],
      [{ text: 42, to: 'de' }, 'text'],
      [{ text: 'hi', to: 'de', from: 7 }, 'from'],
      [{ text: 'hi', to: 'de', textType: 'html' }, 'textType'],
    ];
    for (const [body, param] of cases) {
      const a = await translate(account.key, body);
      expect(a.status, JSON.stringify(body)).toBe(400);
      expect(a.json.error.code).toBe('invalid_request');
      expect(a.json.error.param, JSON.stringify(a.json)).toBe(param);
    }
    const wrongModel = await translate(account.key, { model: 'rerank-pro', text: 'hi', to: 'de' });
    expect(wrongModel.json.error).toMatchObject({ code: 'model_not_available', param: 'model' });
    await untouched(account, 1_000_000_000n);
  });

  it('charges nothing when the vendor does not say what it charged, or fails', async () => {
    const account = await t.account('1');
    await t.fault({ omit_usage: true });
    const unreported = await translate(account.key, { text: 'hi', to: 'de' });
    expect(unreported.status).toBe(502);
    expect(unreported.json.error.code).toBe('upstream_error');
    await t.fault({ status: 503 });
    expect((await translate(account.key, { text: 'hi', to: 'de' })).status).toBe(502);
    await untouched(account, 1_000_000_000n);
  });

  it('reserves every character once per language and refuses what does not fit, naming the amounts', async () => {
    // 100,000 nano is 10 characters at $10 per 1M; 'Hello' to two languages needs 10, to three 15.
    const account = await t.account('0.0001');
    const refused = await translate(account.key, { text: 'Hello', to: ['de', 'fr', 'it'] });
    expect(refused.status).toBe(402);
    expect(refused.json.error.message).toBe('Insufficient balance: this request needs $0.00015 reserved (15 characters at $10 per 1000000); $0.0001 is available. Top up.');
    const fits = await translate(account.key, { text: 'Hello', to: ['de', 'fr'] });
    expect(fits.status).toBe(200);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 0n, heldNano: 0n });
  });

  it('lists the translation offering under ?service_type=translation, and the catalogue prices it per 1M characters as a decimal string', async () => {
    const { ids, entry } = await listedAndCatalogued(t, 'translation', 'translator-standard');
    expect(ids).toEqual(['translator-standard']);
    expect(entry).toMatchObject({ provider: 'azure_translator', service_type: 'TRANSLATION', availability: 'available' });
    expect(entry!.billing).toEqual({ unit: 'character', per: 1000000, prices: { character: '10.00' } });
  });
});
