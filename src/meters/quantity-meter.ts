/**
 * The quantity meter: every billing unit but tokens (characters, text records, search units,
 * records, pages, features, seconds, images, megapixels, minutes; spec 1). One usage row per request:
 * kind = the route's id (the capability), unit = the billing unit, quantity = the declared source
 * rounded as declared, amount = quantity x price / per rounded once (half away from zero). The hold is
 * the declared reserve quantity, priced and rounded up, so it never falls short by a nano. The price
 * is the request's priced variant's when the offering has `billing.variants` (issue 31 item 8).
 */
import type { CompiledOffering } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { UsageRowInput } from '../ledger/types.js';
import { unitPrice } from '../billing/pricing.js';
import { describeVariant, requestUnitPrice, variantFor } from '../billing/variants.js';
import { divideRounded, formatUsd } from '../money.js';
import { CounterInputError } from './counters/index.js';
import { fileFacts, inputField, MissingQuantityError, readScaled, readsRequestOnly, type ScaledSource, type SourceInputs } from './sources.js';
import type { Bill, Meter, MeterContext, MeterMetrics, Quote } from './types.js';

/** How a fractional quantity becomes a whole one. */
export type Rounding = 'ceil' | 'floor' | 'half_up';

/** A compiled quantity meter of one route. */
export interface QuantitySpec {
  unit: string;
  /** The route's id: the usage rows' kind. */
  kind: string;
  source: ScaledSource;
  reserve: ScaledSource;
  round: Rounding;
  headers: { quantity?: string; cost?: string };
  /** Steps per unit (route `step: 1/n`: n; default 1): the quantity is rounded to whole steps and priced per step. */
  stepsPerUnit?: bigint;
}

/** Rounds a non-negative quantity to a whole one. */
export function roundQuantity(value: number, mode: Rounding): bigint {
  const whole = mode === 'ceil' ? Math.ceil(value) : mode === 'floor' ? Math.floor(value) : Math.floor(value + 0.5);
  return BigInt(whole);
}

/**
 * quantity x price / per, rounded half away from zero: the one rounding of a usage row. `price` is the
 * request's (its priced variant's, issue 31 item 8); the offering's one price by default.
 */
export function quantityCharge(quantity: bigint, offering: CompiledOffering, stepsPerUnit = 1n, price = unitPrice(offering)): bigint {
  return divideRounded(quantity * price, offering.billing.per * stepsPerUnit);
}

/** The same, rounded up: what a hold reserves (at the same variant's price, so the hold never falls short). */
export function quantityHold(quantity: bigint, offering: CompiledOffering, stepsPerUnit = 1n, price = unitPrice(offering)): bigint {
  const per = offering.billing.per * stepsPerUnit;
  return (quantity * price + per - 1n) / per;
}

function read(source: ScaledSource, inputs: SourceInputs, round: Rounding, stepsPerUnit = 1n): bigint {
  try {
    // In whole steps; the product is first rounded to a millionth of a step, so a binary-float
    // artefact (0.7 s x 10 = 7.000000000000001) never rounds up to another step.
    const steps = readScaled(source, inputs) * Number(stepsPerUnit);
    return roundQuantity(stepsPerUnit === 1n ? steps : Math.round(steps * 1e6) / 1e6, round);
  } catch (error) {
    // A request value a counter cannot count is the client's to fix; the schema should have caught it.
    if (error instanceof CounterInputError) throw new GatewayError('invalid_request', `The request cannot be metered: ${error.problem}.`);
    // The answer lacks its billed quantity: a malformed answer, not billed (spec 1: failures are not charged).
    if (error instanceof MissingQuantityError) throw new GatewayError('upstream_error', 'The upstream provider sent an answer without its billed quantity.');
    throw error;
  }
}

function plural(unit: string, n: bigint): string {
  return n === 1n ? unit.replace(/_/g, ' ') : `${unit.replace(/_/g, ' ')}s`;
}

/** A quantity of steps as the decimal the client reads (`3` steps of 0.5 s: `1.5`). */
function decimal(steps: bigint, stepsPerUnit: bigint): string {
  return stepsPerUnit === 1n ? steps.toString() : (Number(steps) / Number(stepsPerUnit)).toString();
}

/**
 * True when a source (with its `plus`) is known once the upstream's status and headers are in: it
 * reads only the request, a constant, a local counter over the request or its files, or an upstream
 * response header; never the answer's body nor what the translator makes of it (issue 9 point 3).
 */
export function knownAtHeaders(source: ScaledSource): boolean {
  return readsRequestOnly(source, { headers: true });
}

/** A meter billing one quantity of `spec.unit` per request. */
export function quantityMeter(spec: QuantitySpec): Meter {
  const k = spec.stepsPerUnit ?? 1n;
  const floorParam = inputField(spec.reserve);
  return {
    unit: spec.unit,
    knownAtHeaders: knownAtHeaders(spec.source),
    // A priced-variant offering refuses a request none of its variants prices (issue 31 item 8), before the hold.
    check: (ctx, offering = ctx.model!.offering) => { variantFor(offering, ctx.body); },
    // Input tokens metered as a quantity (embeddings) count against the token rate limit like chat's.
    demand: (ctx) => {
      if (spec.unit !== 'token') return { limiterUnits: 0, limiterFloor: 0, floorParam: null };
      const tokens = Number(read(spec.reserve, { request: ctx.body, files: fileFacts(ctx), answer: null }, spec.round));
      return { limiterUnits: tokens, limiterFloor: tokens, floorParam };
    },

    quote(ctx: MeterContext, demand, offering = ctx.model!.offering): Quote {
      // Input tokens metered as a quantity were counted for the demand already.
      const quantity = spec.unit === 'token' ? BigInt(demand.limiterUnits) : read(spec.reserve, { request: ctx.body, files: fileFacts(ctx), answer: null }, spec.round, k);
      const price = requestUnitPrice(offering, ctx.body);
      const amountNano = quantityHold(quantity, offering, k, price);
      return {
        amountNano, inputEstimate: 0,
        refusal: (account) => {
          const available = account.balanceNano + account.creditLimitNano;
          return {
            message: `Insufficient balance: this request needs $${formatUsd(amountNano)} reserved (${decimal(quantity, k)} ${plural(spec.unit, quantity === k ? 1n : 2n)} at $${formatUsd(price)} per ${offering.billing.per}); $${formatUsd(available > 0n ? available : 0n)} is available. Top up.`,
            param: null,
          };
        },
      };
    },

    bill(ctx, outcome): Bill | null {
      if (outcome.delivery === 'none' || !outcome.answer) return null;
      const offering = ctx.model!.offering;
      const quantity = read(spec.source, { request: ctx.body, files: fileFacts(ctx), answer: outcome.answer }, spec.round, k);
      const variant = variantFor(offering, ctx.body);
      const price = variant?.price ?? unitPrice(offering);
      const amountNano = quantityCharge(quantity, offering, k, price);
      const details: Record<string, string> = { price_usd: formatUsd(price), per: offering.billing.per.toString() };
      // The request values that chose the price (issue 31 item 8).
      if (variant) details.variant = describeVariant(variant);
      // A stepped meter's row counts steps (e.g. half seconds); details say so.
      if (k !== 1n) Object.assign(details, { step: decimal(1n, k), quantity: decimal(quantity, k) });
      // The row names the offering's id, also when the client asked for one of its aliases (issue 31 item 4).
      const row: UsageRowInput = {
        requestId: ctx.requestId, keyId: ctx.auth?.keyId ?? null, model: offering.id, kind: spec.kind, unit: spec.unit,
        quantity, amountNano, details,
      };
      const headers: Record<string, string> = {};
      if (spec.headers.quantity) headers[spec.headers.quantity] = decimal(quantity, k);
      if (spec.headers.cost) headers[spec.headers.cost] = formatUsd(amountNano);
      const provider = ctx.model!.provider.id;
      // The metrics keep the charge; a quantity's unit has no metric of its own (null usage).
      const observe = (metrics: MeterMetrics): void => metrics.metered(provider, offering.id, null, amountNano);
      return { rows: [row], limiterUnits: spec.unit === 'token' ? Number(quantity) : 0, observe, headers };
    },
  };
}
