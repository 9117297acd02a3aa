/**
 * Priced variants (issue 31 item 8; src/billing/variants.ts) on the shipped dall-e offerings: the first
 * variant whose values match prices the request, an absent value matches at the model's default,
 * values compare as text (a multipart field), and a request no variant prices is the client's 400
 * naming the parameter and every priced combination. The quantity meter holds and bills at that price.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { requestUnitPrice, variantFor } from '../../src/billing/variants.js';
import { compileGateway } from '../../src/config/compile.js';
import { loadGateway } from '../../src/config/load.js';
import type { CompiledGateway, CompiledOffering } from '../../src/config/types.js';
import { GatewayError } from '../../src/errors.js';
import { quantityCharge, quantityHold } from '../../src/meters/quantity-meter.js';
import { copyConfig } from '../helpers/config.js';

const USD = (cents: number): bigint => BigInt(cents) * 10_000_000n;

describe('priced variants', () => {
  let gateway: CompiledGateway;
  let dalle3: CompiledOffering;
  let dalle2: CompiledOffering;

  beforeAll(async () => {
    gateway = await compileGateway(await loadGateway((await copyConfig()).configFile), { env: {}, simulatorUrl: 'http://127.0.0.1:1' });
    dalle3 = gateway.offerings.get('dall-e-3')!;
    dalle2 = gateway.offerings.get('dall-e-2')!;
  });

  it('prices dall-e-3 at every size and quality OpenAI sells, defaults standard and 1024x1024', () => {
    const cases: Array<[Record<string, unknown>, number]> = [
      [{}, 4], [{ size: '1024x1024', quality: 'standard' }, 4], [{ size: '1024x1792' }, 8], [{ size: '1792x1024', quality: 'standard' }, 8],
      [{ quality: 'hd' }, 8], [{ quality: 'hd', size: '1024x1792' }, 12], [{ quality: 'hd', size: '1792x1024' }, 12],
      // null is an absent value (the request schemas allow it): the default.
      [{ quality: null, size: null }, 4],
    ];
    for (const [body, cents] of cases) expect(requestUnitPrice(dalle3, body), JSON.stringify(body)).toBe(USD(cents));
  });

  it('prices dall-e-2 by size, a multipart field as text alike', () => {
    expect([{ size: '256x256' }, { size: '512x512' }, { size: '1024x1024' }, {}].map((body) => requestUnitPrice(dalle2, body))).toEqual([16_000_000n, 18_000_000n, 20_000_000n, 20_000_000n]);
  });

  it('refuses a combination no variant prices, naming the parameter and the priced combinations', () => {
    const refusal = (offering: CompiledOffering, body: Record<string, unknown>): GatewayError => {
      try { variantFor(offering, body); } catch (error) { return error as GatewayError; }
      throw new Error('not refused');
    };
    const size = refusal(dalle3, { quality: 'hd', size: '512x512' });
    expect(size).toMatchObject({ code: 'unsupported_parameter', status: 400, extra: { param: 'size' } });
    expect(size.message).toBe('Unsupported value for \'size\' on model "dall-e-3": no price for quality hd, size 512x512. Priced combinations: '
      + 'quality standard, size 1024x1024 ($0.04); quality standard, size 1024x1792 ($0.08); quality standard, size 1792x1024 ($0.08); '
      + 'quality hd, size 1024x1024 ($0.08); quality hd, size 1024x1792 ($0.12); quality hd, size 1792x1024 ($0.12).');
    expect(refusal(dalle3, { quality: 'ultra' }).extra.param).toBe('quality');
    expect(refusal(dalle2, { size: 1024 }).message).toContain('no price for size 1024.');
  });

  it('has no variant for an offering of one price, which keeps that price', () => {
    const whisper = gateway.offerings.get('whisper-1')!;
    expect(variantFor(whisper, { size: 'anything' })).toBeNull();
    expect(requestUnitPrice(whisper, {})).toBe(whisper.billing.price);
  });

  it('holds and bills n images at the variant price; the offering\'s price is its cheapest variant, for ordering only', () => {
    const price = requestUnitPrice(dalle3, { quality: 'hd', size: '1792x1024' });
    expect(quantityHold(1n, dalle3, 1n, price)).toBe(USD(12));
    expect(quantityCharge(1n, dalle3, 1n, price)).toBe(USD(12));
    expect(dalle3.billing.price).toBe(USD(4));
    expect(dalle2.billing.price).toBe(16_000_000n);
  });
});
