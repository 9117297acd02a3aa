/**
 * Priced variants end to end (issue 31 item 8): dall-e-3 at every size and quality OpenAI sells and
 * dall-e-2 at every size, generations and edits, each billed (and held) at its own price through the
 * official openai SDK; the size and quality sent upstream explicitly (OpenAI's defaults when absent),
 * so the image and the price agree; an unpriced combination is a 400 naming the priced ones with
 * nothing reserved or charged; the catalogue lists each variant's price.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/images.js';
import { ConsoleClient, signUp } from '../helpers/console.js';

describeStore('images: priced variants (issue 31 item 8)', () => {
  let t: TestGateway;

  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });

  const client = (key: string): OpenAI => new OpenAI({ baseURL: `${t.url}/v1`, apiKey: key, maxRetries: 0 });
  const last = async (): Promise<{ body: Record<string, unknown> }> => (await fetch(`${t.sim.url}/__sim/last`)).json() as Promise<{ body: Record<string, unknown> }>;

  it('bills dall-e-3 at each size and quality, the defaults at standard 1024x1024, sent upstream as billed', async () => {
    const account = await t.account('2');
    const openai = client(account.key);
    const cases: Array<[{ size?: '1024x1024' | '1024x1792' | '1792x1024'; quality?: 'standard' | 'hd' }, string]> = [
      [{}, '0.04'], [{ size: '1024x1792' }, '0.08'], [{ size: '1792x1024', quality: 'standard' }, '0.08'],
      [{ quality: 'hd' }, '0.08'], [{ size: '1024x1792', quality: 'hd' }, '0.12'], [{ size: '1792x1024', quality: 'hd' }, '0.12'],
    ];
    for (const [params, cost] of cases) {
      const { response } = await openai.images.generate({ model: 'dall-e-3', prompt: 'A lighthouse.', ...params }).withResponse();
      expect(response.headers.get('x-gateway-cost-usd'), JSON.stringify(params)).toBe(cost);
      expect((await last()).body, JSON.stringify(params)).toMatchObject({ model: 'dall-e-3', size: params.size ?? '1024x1024', quality: params.quality ?? 'standard' });
    }
    const rows = (await t.usage(account.id)).data.reverse();
    expect(rows.map((r) => [r.model, r.quantity, r.amountNano, r.details.variant])).toEqual(cases.map(([params], i) => [
      'dall-e-3', 1n, [40_000_000n, 80_000_000n, 80_000_000n, 80_000_000n, 120_000_000n, 120_000_000n][i],
      `quality ${params.quality ?? 'standard'}, size ${params.size ?? '1024x1024'}`,
    ]));
    expect((await t.settled(account.id)).balanceNano).toBe(2_000_000_000n - 520_000_000n);
  });

  it('bills dall-e-2 by size on generations (n images) and edits', async () => {
    const account = await t.account('1');
    const openai = client(account.key);
    await openai.images.generate({ model: 'dall-e-2', prompt: 'A cat.', size: '256x256', n: 2 });
    await openai.images.generate({ model: 'dall-e-2', prompt: 'A cat.' });
    const { response } = await openai.images.edit({ model: 'dall-e-2', image: await toFile(png(16, 16, 3), 'a.png', { type: 'image/png' }), prompt: 'A hat.', size: '512x512' }).withResponse();
    expect(response.headers.get('x-gateway-cost-usd')).toBe('0.018');
    const rows = (await t.usage(account.id)).data.reverse();
    expect(rows.map((r) => [r.kind, r.quantity, r.amountNano])).toEqual([['images-generations', 2n, 32_000_000n], ['images-generations', 1n, 20_000_000n], ['images-edits', 1n, 18_000_000n]]);
  });

  it('refuses an unpriced combination with a 400 naming the priced ones, nothing reserved, sent or charged', async () => {
    const account = await t.account('1');
    const openai = client(account.key);
    const before = t.sim.requests;
    const refused = await openai.images.generate({ model: 'dall-e-3', prompt: 'A cat.', size: '512x512', quality: 'hd' }).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    const error = refused as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'size' });
    expect(error.message).toContain('no price for quality hd, size 512x512. Priced combinations: quality standard, size 1024x1024 ($0.04);');
    const edit = await openai.images.edit({ model: 'dall-e-2', image: await toFile(png(16, 16, 3), 'a.png', { type: 'image/png' }), prompt: 'A hat.', size: '1536x1024' as '512x512' }).then(() => null, (e: unknown) => e);
    expect(edit).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'size' });
    expect(t.sim.requests).toBe(before);
    expect((await t.usage(account.id)).data).toEqual([]);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 1_000_000_000n, heldNano: 0n });
  });

  it('holds the variant\'s price: $0.10 pays for an $0.08 image, not a $0.12 one (402, nothing charged)', async () => {
    const account = await t.account('0.10');
    const openai = client(account.key);
    await expect(openai.images.generate({ model: 'dall-e-3', prompt: 'A cat.', size: '1792x1024', quality: 'hd' })).rejects.toMatchObject({ status: 402, code: 'insufficient_balance' });
    expect((await t.usage(account.id)).data).toEqual([]);
    await openai.images.generate({ model: 'dall-e-3', prompt: 'A cat.', size: '1792x1024' });
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: 20_000_000n, heldNano: 0n });
  });

  it('lists each variant\'s price in the public catalogue and on the console\'s terms', async () => {
    const catalog = (await (await fetch(`${t.url}/api/public/catalog`)).json()) as { data: Array<Record<string, any>> };
    const dalle3 = catalog.data.find((o) => o.id === 'dall-e-3')!;
    expect(dalle3.billing).toEqual({ unit: 'image', per: 1, prices: {}, variants: [
      { when: { quality: 'standard', size: '1024x1024' }, price: '0.04' }, { when: { quality: 'standard', size: '1024x1792' }, price: '0.08' },
      { when: { quality: 'standard', size: '1792x1024' }, price: '0.08' }, { when: { quality: 'hd', size: '1024x1024' }, price: '0.08' },
      { when: { quality: 'hd', size: '1024x1792' }, price: '0.12' }, { when: { quality: 'hd', size: '1792x1024' }, price: '0.12' },
    ] });
    expect(catalog.data.find((o) => o.id === 'dall-e-2')!.billing.variants.map((v: { price: string }) => v.price)).toEqual(['0.016', '0.018', '0.02']);
    // The console's catalogue page shows the same prices in words.
    const site = new ConsoleClient(t.url);
    await signUp(site, `variants-${Date.now()}@example.com`);
    const page = await site.get('/console/catalogue?q=dall-e-2');
    expect(page.text).toContain('size 256x256 $0.016 · size 512x512 $0.018 · size 1024x1024 $0.02 per 1 images');
  });
});
