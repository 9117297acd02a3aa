/**
 * Prices token usage exactly. Each usage row is rounded once (half away from zero, to the nano-USD)
 * from the exact product `tokens x price / per`; no per-token rounding, no floating point.
 */
import type { CompiledOffering } from '../config/types.js';
import { divideRounded } from '../money.js';
import type { TokenUsage } from '../translate/types.js';

/**
 * The charge for a request's tokens (spec 1: input, output and cached tokens priced by the model,
 * reasoning counted as output). Cached, cache-write and image tokens are subsets of `input` and are
 * priced at their own rates (image input, spec 4.14: gpt-image-1's reported image_tokens); the rest
 * of the input at the input rate.
 */
export function tokenCharge(usage: TokenUsage, offering: CompiledOffering): bigint {
  const p = offering.billing.prices;
  const cached = BigInt(Math.min(usage.cachedInput, usage.input));
  const written = BigInt(Math.min(usage.cacheWrite, usage.input - Number(cached)));
  const image = BigInt(Math.min(usage.imageInput ?? 0, usage.input - Number(cached) - Number(written)));
  const plain = BigInt(usage.input) - cached - written - image;
  const exact = plain * p.input + cached * p.cachedInput + written * p.cacheWrite + image * p.imageInput + BigInt(usage.output) * p.output;
  return divideRounded(exact, offering.billing.per);
}

/**
 * The most a request can cost, for its reservation: the input estimate plus a margin at the highest
 * input rate, and the full output allowance. Rounded up so the hold never falls short by a nano.
 */
export function holdAmount(inputEstimate: number, maxOutput: number, marginPercent: bigint, offering: CompiledOffering): bigint {
  const p = offering.billing.prices;
  const topInput = [p.input, p.cachedInput, p.cacheWrite, p.imageInput].reduce((a, b) => (b > a ? b : a));
  const input = (BigInt(inputEstimate) * (100n + marginPercent) + 99n) / 100n + 8n;
  const exact = input * topInput + BigInt(maxOutput) * p.output;
  const per = offering.billing.per;
  return (exact + per - 1n) / per;
}

/**
 * The price of one `per` of the offering's unit. A token-priced offering metered as a plain quantity
 * (input tokens only: embeddings, spec 1) is priced at its input rate.
 */
export function unitPrice(offering: CompiledOffering): bigint {
  return offering.billing.unit === 'token' ? offering.billing.prices.input : offering.billing.price;
}
