/**
 * How large a grant should be (issue 30: "sized from the account's recent spend rate, capped by
 * `max_grant_usd` and by `balance_fraction` of what is available; below a floor the account is
 * strict"). The demand is the peak of what was in flight and unposted together (plus quotes that found
 * no headroom), decaying by half a second; a grant of twice that absorbs a burst between flushes. The
 * floor is two of the largest recent quotes (decaying too, so that one dear request does not keep an
 * account strict): a grant too small to admit a couple of requests only adds a round trip to the
 * strict path.
 */
import type { GrantSettings } from './settings.js';

/** What sizing reads of an account's grant. */
export interface SizingInput {
  amountNano: bigint;
  inflightNano: bigint;
  unpostedNano: bigint;
  missedNano: bigint;
  peakDemandNano: bigint;
  largestQuoteNano: bigint;
  /** Balance + credit limit as the store last said; null when unknown (a grant being opened). */
  availableNano: bigint | null;
}

/** The peak demand after one flush interval: the current demand, or the old peak decayed. */
export function nextPeak(input: SizingInput, flushMs: number): bigint {
  const now = input.inflightNano + input.unpostedNano + input.missedNano;
  const decayed = (input.peakDemandNano * BigInt(Math.max(0, 500 - flushMs))) / 500n;
  return now > decayed ? now : decayed;
}

/**
 * The largest recent quote after one flush interval: a 64th less (at the default 100 ms, half of it
 * is forgotten in about 4.5 s; admissions raise it again).
 */
export function nextLargest(largestQuoteNano: bigint): bigint {
  return largestQuoteNano - largestQuoteNano / 64n;
}

/** The grant wanted (0: none, the account is strict) and the least a new grant may be. */
export function grantTarget(input: SizingInput, settings: GrantSettings): { targetNano: bigint; floorNano: bigint } {
  const floorNano = input.largestQuoteNano * 2n;
  let target = input.peakDemandNano * 2n;
  if (target < floorNano) target = floorNano;
  if (target > settings.maxGrantNano) target = settings.maxGrantNano;
  if (input.availableNano !== null) {
    const cap = fractionOf(input.availableNano + input.amountNano, settings.balanceFraction);
    if (target > cap) target = cap;
  }
  return { targetNano: target < floorNano ? 0n : target, floorNano };
}

/** `fraction` of `amount`, rounded down, exactly (the fraction to a millionth). */
export function fractionOf(amountNano: bigint, fraction: number): bigint {
  if (amountNano <= 0n) return 0n;
  return (amountNano * BigInt(Math.round(fraction * 1_000_000))) / 1_000_000n;
}
