/**
 * Compiles a route's `meter:` (issue 9, "Meters are data"): per billing unit, the meter that bills an
 * offering of that unit. Refused with file, path and reason: a token meter on a format that cannot
 * size requests in tokens, an unknown counter, a source that is not exactly one thing, a quantity read
 * from the answer with no reserve declared (admission must price the request before any answer).
 */
import { ManifestError } from '../config/errors.js';
import type { CompiledRoute } from '../config/types.js';
import type { ClientFormat } from '../formats/types.js';
import type { QuantitySource, RouteManifest } from '../generated/manifest-types.js';
import { quantityMeter } from './quantity-meter.js';
import { compileSource, fileFacts, inputField, readScaled, readsRequestOnly } from './sources.js';
import { NO_TOKEN_SIZING, tokenMeter, type InputEstimate } from './token-meter.js';
import { CounterInputError } from './counters/index.js';
import { GatewayError } from '../errors.js';
import type { Meter, MeterContext } from './types.js';

export type { Meter } from './types.js';

/** Steps per unit of a meter's `step` (1/n gives n); a step that is not 1/n is refused. */
function stepsOf(step: number | undefined, file: string, at: string): bigint {
  if (step === undefined) return 1n;
  const n = Math.round(1 / step);
  if (Math.abs(n * step - 1) > 1e-9) throw new ManifestError(file, `${at}/step`, `step ${step} is not 1/n of the unit (e.g. 0.5, 0.25, 0.1)`);
  return BigInt(n);
}

/**
 * A token meter's `output_times` (e.g. `{request: /n}`: the offering's max_output_tokens is per image),
 * read from the request at admission; a value that is not a whole number of at least 1 is refused.
 */
function outputTimes(raw: QuantitySource | undefined, file: string, at: string): ((ctx: MeterContext) => number) | undefined {
  if (!raw) return undefined;
  const source = compileSource(raw, file, `${at}/output_times`);
  if (!readsRequestOnly(source)) throw new ManifestError(file, `${at}/output_times`, 'output_times must read the request (a count, or a constant)');
  return (ctx) => {
    let times: number;
    try { times = readScaled(source, { request: ctx.body, files: fileFacts(ctx), answer: null }); } catch {
      throw new GatewayError('invalid_request', 'The request cannot be metered: its output count is missing or not a number.');
    }
    if (!Number.isSafeInteger(times) || times < 1) throw new GatewayError('invalid_request', `The request cannot be metered: its output count ${times} is not a whole number of at least 1.`);
    return times;
  };
}

/** The meters of one route by billing unit (empty for a free route). */
export function compileMeters(manifest: RouteManifest, format: ClientFormat, file: string): ReadonlyMap<string, Meter> {
  const meters = new Map<string, Meter>();
  for (const [unit, spec] of Object.entries(manifest.meter ?? {})) {
    const at = `/meter/${unit}`;
    // `translator: tokens` is the token meter (input, output, cached... priced by kind); any other
    // token source is a plain quantity of input tokens (embeddings), priced at the input rate.
    if (unit === 'token' && spec.source.translator === 'tokens') {
      // A declared reserve is the input estimate (e.g. audio tokens from the measured duration, spec 4.8).
      if (spec.reserve) {
        const reserve = compileSource(spec.reserve, file, `${at}/reserve`);
        if (!readsRequestOnly(reserve)) throw new ManifestError(file, `${at}/reserve`, 'a reserve must read the request (an estimate, a cap or a constant)');
        const estimate: InputEstimate = {
          param: inputField(reserve),
          tokens: (ctx) => {
            try { return Math.ceil(readScaled(reserve, { request: ctx.body, files: fileFacts(ctx), answer: null })); } catch (error) {
              if (error instanceof CounterInputError) throw new GatewayError('invalid_request', `The request cannot be metered: ${error.problem}.`);
              throw error;
            }
          },
        };
        meters.set(unit, tokenMeter(format.tokens ?? NO_TOKEN_SIZING, estimate, spec.headers?.cost, outputTimes(spec.output_times, file, at)));
        continue;
      }
      if (spec.output_times) throw new ManifestError(file, `${at}/output_times`, 'output_times belongs to a token meter with a `reserve` (a format that sizes requests in tokens reads the output cap from the request)');
      if (!format.tokens) throw new ManifestError(file, at, `client format "${format.id}" cannot size requests in tokens, so it cannot have a token meter`);
      meters.set(unit, tokenMeter(format.tokens, undefined, spec.headers?.cost));
      continue;
    }
    if (spec.output_times) throw new ManifestError(file, `${at}/output_times`, 'output_times belongs to the token meter (`source: {translator: tokens}`)');
    const source = compileSource(spec.source, file, `${at}/source`);
    const reserve = spec.reserve ? compileSource(spec.reserve, file, `${at}/reserve`) : source;
    if (!readsRequestOnly(reserve)) {
      throw new ManifestError(file, spec.reserve ? `${at}/reserve` : at, 'the quantity is read from the answer: declare a `reserve` that reads the request (an estimate, a cap or a constant)');
    }
    meters.set(unit, quantityMeter({ unit, kind: manifest.id, source, reserve, round: spec.round ?? 'ceil', headers: { ...spec.headers }, stepsPerUnit: stepsOf(spec.step, file, at) }));
  }
  return meters;
}

/** Meters of every compiled route (a side table, so the configuration types need not know meters). */
const ROUTE_METERS = new WeakMap<CompiledRoute, ReadonlyMap<string, Meter>>();

/** Records the meters compiled for `route` (config compile, at boot and on every reload). */
export function attachMeters(route: CompiledRoute, meters: ReadonlyMap<string, Meter>): void {
  ROUTE_METERS.set(route, meters);
}

/** The billing units `route` meters. */
export function meteredUnits(route: CompiledRoute): ReadonlySet<string> {
  return new Set(ROUTE_METERS.get(route)?.keys() ?? []);
}

/** The meter of the request's route for its offering's billing unit; null on free routes or before a model. */
export function meterOf(ctx: Pick<MeterContext, 'route' | 'model'>): Meter | null {
  if (!ctx.route.billable || !ctx.model) return null;
  return ROUTE_METERS.get(ctx.route)?.get(ctx.model.offering.billing.unit) ?? null;
}
