import { describe, expect, it } from 'vitest';
import { DEFAULT_GRANTS } from '../../../src/ledger/grants/settings.js';
import { fractionOf, grantTarget, nextLargest, nextPeak, type SizingInput } from '../../../src/ledger/grants/sizing.js';

const input = (over: Partial<SizingInput>): SizingInput => ({
  amountNano: 0n, inflightNano: 0n, unpostedNano: 0n, missedNano: 0n, peakDemandNano: 0n, largestQuoteNano: 0n, availableNano: null, ...over,
});

describe('grant sizing (issue 30)', () => {
  it('asks for twice the peak demand, at least two of the largest recent quotes, capped by max_grant_usd and balance_fraction', () => {
    expect(grantTarget(input({ peakDemandNano: 1_000n, largestQuoteNano: 100n }), DEFAULT_GRANTS)).toEqual({ targetNano: 2_000n, floorNano: 200n });
    expect(grantTarget(input({ peakDemandNano: 10n, largestQuoteNano: 100n }), DEFAULT_GRANTS).targetNano).toBe(200n);
    expect(grantTarget(input({ peakDemandNano: 10n ** 12n, largestQuoteNano: 100n }), DEFAULT_GRANTS).targetNano).toBe(DEFAULT_GRANTS.maxGrantNano);
    // A quarter of what is available (the grant's own amount included).
    expect(grantTarget(input({ peakDemandNano: 10_000n, largestQuoteNano: 100n, availableNano: 3_000n, amountNano: 1_000n }), DEFAULT_GRANTS).targetNano).toBe(1_000n);
  });

  it('takes no grant when the cap is below the floor: the account is strict', () => {
    expect(grantTarget(input({ peakDemandNano: 1_000n, largestQuoteNano: 1_000n, availableNano: 4_000n }), DEFAULT_GRANTS).targetNano).toBe(0n);
  });

  it('forgets a dear request: the largest quote and the peak decay, so one request does not keep an account strict', () => {
    let largest = 2_000_000_000n;
    const cheap = { peakDemandNano: 10_000n, availableNano: 100_000_000n };
    expect(grantTarget(input({ ...cheap, largestQuoteNano: largest }), DEFAULT_GRANTS).targetNano).toBe(0n);
    for (let i = 0; i < 1_000; i++) largest = nextLargest(largest);
    expect(grantTarget(input({ ...cheap, largestQuoteNano: largest }), DEFAULT_GRANTS).targetNano).toBeGreaterThan(0n);
    expect(nextPeak(input({ peakDemandNano: 1_000n }), 100)).toBe(800n);
    expect(nextPeak(input({ peakDemandNano: 1_000n, inflightNano: 900n }), 100)).toBe(900n);
  });

  it('takes a fraction exactly, rounded down', () => {
    expect(fractionOf(10n, 0.25)).toBe(2n);
    expect(fractionOf(-5n, 0.25)).toBe(0n);
    expect(fractionOf(1_000_000_000n, 0.333333)).toBe(333_333_000n);
  });
});
