/**
 * The offerings a request may be served by (issue 29 item 4), in order: the requested model, then the
 * ids the client sent in `models` (an aggregator's convention), then the model's `fallbacks`; apart, the
 * model's `context_window_fallbacks` and `content_policy_fallbacks`, tried only on those errors.
 * A client's `models` entry the route cannot serve is the client's 400; a configured fallback that
 * cannot take this request (unavailable now, an output cap below the request's, a provider-held state
 * elsewhere) is left out, and so is one the request's key may not use (its allowed_models, issue 33
 * item 2; a client's `models` entry it may not use is a 403).
 */
import type { CompiledOffering } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { meterOf } from '../meters/index.js';
import type { RequestContext, ServingPlan } from './context.js';
import { servingDeployments } from './deployment.js';
import { chooseUpstream } from '../config/upstream-choice.js';
import { modelById } from '../config/aliases.js';
import { checkKeyAllows, keyAllows } from './key-models.js';

/** The most ids a client may list in `models`. */
export const MAX_CLIENT_MODELS = 8;


/** The client's `models` list, taken out of the body (it is the gateway's, never the vendor's). */
export function takeClientModels(ctx: RequestContext): string[] {
  if (!Object.hasOwn(ctx.body, 'models')) return [];
  const { models, ...rest } = ctx.body;
  ctx.body = rest;
  if (models === undefined || models === null) return [];
  if (!Array.isArray(models) || models.some((m) => typeof m !== 'string') || models.length > MAX_CLIENT_MODELS) {
    throw new GatewayError('invalid_request', `'models' must be an array of at most ${MAX_CLIENT_MODELS} model ids.`, { param: 'models' });
  }
  return models as string[];
}

/** Whether `offering` can take this request on this route (availability, an operation for its input, the meter's limits). */
function canServe(ctx: RequestContext, offering: CompiledOffering): boolean {
  if (!keyAllows(ctx, offering)) return false;
  if (!offering.enabled || offering.availability !== 'available' || !ctx.route.serviceTypes.has(offering.serviceType)) return false;
  const deployments = servingDeployments(offering, ctx.pinnedProvider, ctx.route);
  if (!deployments.some((d) => chooseUpstream(ctx.route, d.offering, d.provider, ctx.routing!.clientBody))) return false;
  try { meterOf(ctx)?.check(ctx, offering); } catch { return false; }
  return true;
}

/** The client's `models`, each one it may use on this route, or its 400. */
function clientModels(ctx: RequestContext, ids: readonly string[]): CompiledOffering[] {
  return ids.map((id) => {
    const offering = modelById(ctx.gateway, id);
    if (!offering || !offering.enabled) throw new GatewayError('model_not_found', `The model "${id}" in 'models' does not exist; refresh the catalogue.`, { param: 'models' });
    checkKeyAllows(ctx, offering, id, 'models');
    if (!canServe(ctx, offering)) throw new GatewayError('model_not_available', `The model "${id}" in 'models' cannot serve this request on ${ctx.route.manifest.path}.`, { param: 'models' });
    return offering;
  });
}

function configured(ctx: RequestContext, ids: readonly string[], seen: Set<CompiledOffering>): CompiledOffering[] {
  const out: CompiledOffering[] = [];
  for (const id of ids) {
    const offering = ctx.gateway.offerings.get(id);
    if (!offering || seen.has(offering) || !canServe(ctx, offering)) continue;
    seen.add(offering);
    out.push(offering);
  }
  return out;
}

/** The request's plan; `primary` is the requested offering, already checked by the route stage. */
export function servingPlan(ctx: RequestContext, primary: CompiledOffering, clientIds: readonly string[]): ServingPlan {
  const chain = [primary];
  if (clientIds.length === 0 && primary.fallbacks.length === 0 && primary.contextWindowFallbacks.length === 0 && primary.contentPolicyFallbacks.length === 0) {
    return { chain, contextFallbacks: [], contentFallbacks: [] };
  }
  const seen = new Set<CompiledOffering>(chain);
  for (const offering of clientModels(ctx, clientIds)) {
    if (!seen.has(offering)) { seen.add(offering); chain.push(offering); }
  }
  chain.push(...configured(ctx, primary.fallbacks, seen));
  return {
    chain,
    contextFallbacks: configured(ctx, primary.contextWindowFallbacks, new Set([primary])),
    contentFallbacks: configured(ctx, primary.contentPolicyFallbacks, new Set([primary])),
  };
}

/** Every offering the plan may reach, for the hold (it covers the dearest, issue 29 item 4). */
export function reachable(plan: ServingPlan): CompiledOffering[] {
  if (plan.chain.length === 1 && plan.contextFallbacks.length === 0 && plan.contentFallbacks.length === 0) return plan.chain;
  return [...new Set([...plan.chain, ...plan.contextFallbacks, ...plan.contentFallbacks])];
}
