/** The figures of a refused reservation: exact to the nano against holdAmount, at every edge. */
import { describe, expect, it } from 'vitest';
import { quoteAmount, shortfall, shortfallMessage, type HoldQuote } from '../../src/billing/shortfall.js';
import { DEFAULT_ROUTING } from '../../src/config/routing.js';
import type { CompiledOffering, TokenPrices } from '../../src/config/types.js';

function offering(prices: Partial<TokenPrices>, per = 1_000_000n): CompiledOffering {
  const input = prices.input ?? 150_000_000n;
  return {
    id: 'm', upstreamModel: 'm', providerId: 'p', serviceType: 'CHAT', availability: 'available', enabled: true, nativeResponses: false, structuredOutput: false, created: 0, skills: new Set(),
    maxOutputTokens: 16384, contextWindow: 128000, deployments: [], fallbacks: [], contextWindowFallbacks: [], contentPolicyFallbacks: [], routing: DEFAULT_ROUTING, continuation: null,
    billing: { unit: 'token', per, price: 0n, prices: { input, output: prices.output ?? 600_000_000n, cachedInput: prices.cachedInput ?? input, cacheWrite: prices.cacheWrite ?? input, imageInput: prices.imageInput ?? input }, priceText: {}, tools: {}, toolText: {} },
  };
}

// 0.15 / 0.60 USD per 1M tokens, a 20% input margin, 120 input tokens, 4096 of output.
const quote = (over: Partial<HoldQuote> = {}): HoldQuote => ({ inputEstimate: 120, maxOutput: 4096, toolsNano: 0n, marginPercent: 20n, offering: offering({}), ...over });
const account = (balanceNano: bigint, creditLimitNano = 0n) => ({ balanceNano, creditLimitNano });

/** The largest cap whose hold fits, by walking every cap: the oracle for the binary search. */
function linearFit(q: HoldQuote, available: bigint): number {
  let best = 0;
  for (let m = 1; m <= q.maxOutput; m++) if (quoteAmount(q, m) <= available) best = m;
  return best;
}

describe('shortfall', () => {
  it('needs exactly what the reservation priced', () => {
    const q = quote();
    // (ceil(120 * 1.2) + 8) * 150 + 4096 * 600 = 152 * 150 + 2,457,600 = 2,480,400 nano
    expect(quoteAmount(q)).toBe(2_480_400n);
    expect(shortfall(q, account(1_000_000n)).neededNano).toBe(2_480_400n);
  });

  it('finds the largest cap that fits, and the next one does not', () => {
    const q = quote();
    const s = shortfall(q, account(1_000_000n));
    // (1,000,000 - 22,800) / 600 = 1628.67: 1628 fits, 1629 does not.
    expect(s.fittingOutput).toBe(1628);
    expect(quoteAmount(q, 1628)).toBeLessThanOrEqual(1_000_000n);
    expect(quoteAmount(q, 1629)).toBeGreaterThan(1_000_000n);
  });

  it('is exact at the boundary: a hold equal to what is available fits, one nano less does not', () => {
    const q = quote();
    for (const m of [1, 2, 777, 4095]) {
      expect(shortfall(q, account(quoteAmount(q, m))).fittingOutput).toBe(m);
      expect(shortfall(q, account(quoteAmount(q, m) - 1n)).fittingOutput).toBe(m - 1);
    }
  });

  it('matches a walk over every cap where rounding up to the nano matters', () => {
    // 0.000007 USD per 1M input, 0.000013 per 1M output: each token is a fraction of a nano, rounded up once.
    const q = quote({ maxOutput: 300, inputEstimate: 7, offering: offering({ input: 7_000n, output: 13_000n }) });
    for (let available = 0n; available <= quoteAmount(q) + 1n; available++) {
      expect(shortfall(q, account(available)).fittingOutput).toBe(Math.min(linearFit(q, available), q.maxOutput));
    }
  });

  it('counts the built-in tools in the hold', () => {
    const q = quote({ toolsNano: 50_000_000n });
    expect(quoteAmount(q)).toBe(2_480_400n + 50_000_000n);
    expect(shortfall(q, account(50_000_000n + quoteAmount(quote(), 10))).fittingOutput).toBe(10);
    // The tools alone exceed the balance: no cap helps.
    expect(shortfall(q, account(49_999_999n)).fittingOutput).toBe(0);
  });

  it('adds the credit limit to the balance and never shows less than zero', () => {
    expect(shortfall(quote(), account(-200_000n, 1_200_000n))).toMatchObject({ availableNano: 1_000_000n, fittingOutput: 1628 });
    expect(shortfall(quote(), account(-5_000_000n, 1_000_000n))).toMatchObject({ availableNano: 0n, fittingOutput: 0 });
  });

  it('reports 0 when not even a cap of 1 fits (the input alone is too much)', () => {
    expect(shortfall(quote(), account(quoteAmount(quote(), 1) - 1n)).fittingOutput).toBe(0);
    expect(shortfall(quote(), account(0n)).fittingOutput).toBe(0);
  });

  it('with a free output, it is all or nothing', () => {
    const q = quote({ offering: offering({ output: 0n }) });
    expect(shortfall(q, account(quoteAmount(q))).fittingOutput).toBe(4096);
    expect(shortfall(q, account(quoteAmount(q) - 1n)).fittingOutput).toBe(0);
  });

  it('reports the full cap when the account can cover it after all (another hold closed meanwhile)', () => {
    expect(shortfall(quote(), account(10_000_000n)).fittingOutput).toBe(4096);
  });
});

describe('shortfallMessage', () => {
  const cap = { param: 'max_tokens', clientSet: true };

  it('states the need, the available amount and the cap to lower to, with param', () => {
    const q = quote();
    const { message, param } = shortfallMessage(shortfall(q, account(1_000_000n)), q, cap);
    expect(message).toBe('Insufficient balance: this request needs $0.0024804 reserved (its input estimate plus max_tokens 4096 of output); $0.001 is available. Lower max_tokens to 1628 or less, or top up.');
    expect(param).toBe('max_tokens');
  });

  it("uses the client's parameter name, and says Set when the client left the cap to the default", () => {
    const q = quote();
    const { message, param } = shortfallMessage(shortfall(q, account(1_000_000n)), q, { param: 'max_output_tokens', clientSet: false });
    expect(message).toContain('plus 4096 output tokens, the default when max_output_tokens is not set');
    expect(message).toContain('Set max_output_tokens to 1628 or less, or top up.');
    expect(param).toBe('max_output_tokens');
  });

  it('says top up, with no param, when not even a cap of 1 fits', () => {
    const q = quote();
    const { message, param } = shortfallMessage(shortfall(q, account(0n)), q, cap);
    expect(message).toBe('Insufficient balance: this request needs $0.0024804 reserved (its input estimate plus max_tokens 4096 of output); $0 is available. That is not enough even for max_tokens 1: top up.');
    expect(param).toBeNull();
  });

  it('names the tool share of the hold', () => {
    const q = quote({ toolsNano: 50_000_000n });
    expect(shortfallMessage(shortfall(q, account(0n)), q, cap).message).toContain('plus max_tokens 4096 of output and $0.05 of built-in tool calls)');
  });

  it('asks for a retry when the cap fits after all', () => {
    const q = quote();
    expect(shortfallMessage(shortfall(q, account(10_000_000n)), q, cap)).toEqual({ message: expect.stringMatching(/is available\. Retry, or top up\.$/), param: null });
  });
});
