/**
 * Priced variants (issue 31 item 8, `billing.variants`): an offering whose price depends on request
 * values, as OpenAI prices dall-e-3 by size and quality. The first variant whose `when` matches the
 * request prices it; a value the client left out is matched at the model's `params` default (what
 * the gateway sends upstream for it, src/translate/params.ts), so the price and the vendor agree. A
 * request no variant prices is refused before anything is reserved, naming the priced combinations.
 */
import type { CompiledOffering, PriceVariant } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { formatUsd } from '../money.js';
import { unitPrice } from './pricing.js';

/** The request's value of `name` as a variant compares it (text), the model's default when absent; null when neither. */
function requestValue(body: Readonly<Record<string, unknown>>, name: string, offering: CompiledOffering): string | null {
  const value = body[name] ?? offering.params?.[name]?.default;
  return value === undefined || value === null ? null : String(value);
}

/** Whether every value of `variant.when` is the request's. */
function matches(variant: PriceVariant, body: Readonly<Record<string, unknown>>, offering: CompiledOffering): boolean {
  return Object.entries(variant.when).every(([name, value]) => requestValue(body, name, offering) === value);
}

/** A variant's request values in words: `quality hd, size 1024x1792`. */
export function describeVariant(variant: PriceVariant): string {
  return Object.entries(variant.when).map(([name, value]) => `${name} ${value}`).join(', ');
}

/** The variant that prices this request, or null when the offering has one price. Throws the client's 400 when none matches. */
export function variantFor(offering: CompiledOffering, body: Readonly<Record<string, unknown>>): PriceVariant | null {
  const variants = offering.billing.variants ?? [];
  if (variants.length === 0) return null;
  const found = variants.find((v) => matches(v, body, offering));
  if (found) return found;
  const names = [...new Set(variants.flatMap((v) => Object.keys(v.when)))];
  // The parameter to fix: the first whose value no variant has (else the first named).
  const param = names.find((name) => !variants.some((v) => v.when[name] === undefined || v.when[name] === requestValue(body, name, offering))) ?? names[0]!;
  const asked = names.map((name) => `${name} ${requestValue(body, name, offering) ?? '(none)'}`).join(', ');
  const priced = variants.map((v) => `${describeVariant(v)} ($${formatUsd(v.price)})`).join('; ');
  throw new GatewayError('unsupported_parameter', `Unsupported value for '${param}' on model "${offering.id}": no price for ${asked}. Priced combinations: ${priced}.`, { param });
}

/** The price of one `per` of the offering's unit for this request: its variant's, or the offering's one price. */
export function requestUnitPrice(offering: CompiledOffering, body: Readonly<Record<string, unknown>>): bigint {
  return variantFor(offering, body)?.price ?? unitPrice(offering);
}
