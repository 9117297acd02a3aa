/** Token pricing: cached and cache-write tokens at their own rates, reasoning inside output, one rounding. */
import { describe, expect, it } from 'vitest';
import { holdAmount, tokenCharge } from '../../src/billing/pricing.js';
import { DEFAULT_ROUTING } from '../../src/config/routing.js';
import type { CompiledOffering } from '../../src/config/types.js';

function offering(prices: { input: bigint; output: bigint; cachedInput: bigint; cacheWrite: bigint; imageInput?: bigint }): CompiledOffering {
  return {
    id: 'm', upstreamModel: 'm', providerId: 'p', serviceType: 'CHAT', availability: 'available', enabled: true, nativeResponses: false, structuredOutput: false, created: 0, maxOutputTokens: 100, contextWindow: 1000, skills: new Set(),
    deployments: [], fallbacks: [], contextWindowFallbacks: [], contentPolicyFallbacks: [], routing: DEFAULT_ROUTING, continuation: null,
    billing: { unit: 'token', per: 1_000_000n, price: 0n, prices: { ...prices, imageInput: prices.imageInput ?? prices.input }, priceText: {}, tools: {}, toolText: {} },
  };
}

// 0.15 / 0.60 / cached 0.075 / cache write 0.1875 USD per 1M tokens.
const o = offering({ input: 150_000_000n, output: 600_000_000n, cachedInput: 75_000_000n, cacheWrite: 187_500_000n });
const usage = (input: number, output: number, cachedInput = 0, cacheWrite = 0, reasoning = 0) => ({ input, output, cachedInput, cacheWrite, reasoning });

describe('tokenCharge', () => {
  it('prices plain input and output', () => {
    // 1000 * 150 + 500 * 600 = 450,000 nano
    expect(tokenCharge(usage(1000, 500), o)).toBe(450_000n);
  });

  it('prices cached input at the cached rate, not as plain input', () => {
    // 200 plain * 150 + 800 cached * 75 = 30,000 + 60,000
    expect(tokenCharge(usage(1000, 0, 800), o)).toBe(90_000n);
  });

  it('prices cache writes at their own rate, once', () => {
    // 100 plain * 150 + 900 written * 187.5 = 15,000 + 168,750
    expect(tokenCharge(usage(1000, 0, 0, 900), o)).toBe(183_750n);
  });

  it('counts reasoning as output without adding it twice', () => {
    expect(tokenCharge(usage(0, 300, 0, 0, 256), o)).toBe(tokenCharge(usage(0, 300), o));
  });

  it('rounds the row once, half away from zero', () => {
    // 0.000001 USD per 1M tokens = 1,000 nano per 1M: 0.001 nano per token.
    const cheap = offering({ input: 1_000n, output: 1_000n, cachedInput: 1_000n, cacheWrite: 1_000n });
    expect(tokenCharge(usage(499, 0), cheap)).toBe(0n);
    expect(tokenCharge(usage(500, 0), cheap)).toBe(1n);
    // Rounded once for the row: 300 input + 300 output = 0.6 nano -> 1, not 0.3 -> 0 twice.
    expect(tokenCharge(usage(300, 300), cheap)).toBe(1n);
  });

  it('never lets cached counts exceed the input', () => {
    expect(tokenCharge(usage(10, 0, 50), o)).toBe(tokenCharge(usage(10, 0, 10), o));
  });
});

describe('holdAmount', () => {
  it('covers the worst case and rounds up', () => {
    const hold = holdAmount(100, 50, 10n, o);
    const worst = tokenCharge(usage(110, 50, 0, 110), o);
    expect(hold).toBeGreaterThanOrEqual(worst);
    expect(holdAmount(0, 1, 0n, o)).toBeGreaterThan(0n);
  });
});
