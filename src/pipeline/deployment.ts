/**
 * Prepares a request for one deployment (issue 29): the operation that deployment's provider serves
 * the route with, the parameter policies of that operation and of the offering applied to the
 * client's body, and a translator for that operation's wire format, which builds the upstream body.
 * The route stage prepares the first deployment (its refusals are 400s before anything is reserved);
 * the attempt loop prepares another when an attempt moves on, so a fallback of another wire format is
 * translated afresh from the client's own body.
 */
import type { CompiledDeployment, CompiledOffering, CompiledRoute } from '../config/types.js';
import { applyParamPolicies } from '../translate/params.js';
import { createTranslator } from '../translate/registry.js';
import type { RequestContext } from './context.js';
import { chooseUpstream, wrongEndpoint } from '../config/upstream-choice.js';

/** True when `deployment` is the one the request is prepared for. */
export function isPrepared(ctx: RequestContext, deployment: CompiledDeployment): boolean {
  return ctx.routing?.deployment === deployment;
}

/**
 * Binds the request to `deployment`: `ctx.model`, `ctx.upstream`, `ctx.body` (with the policies
 * applied) and a fresh translator; `translate` also builds the upstream body (the translate stage
 * does it for the first deployment). Throws the client's 400 when the deployment cannot take the
 * request (a parameter its format cannot represent).
 */
export function prepareDeployment(ctx: RequestContext, deployment: CompiledDeployment, translate: boolean): void {
  const routing = ctx.routing!;
  const { offering, provider } = deployment;
  const body = routing.clientBody;
  const choice = chooseUpstream(ctx.route, offering, provider, body);
  if (!choice) throw wrongEndpoint(ctx.gateway, ctx.route, offering, provider, body);
  const format = provider.operations[choice.operation]!.format;
  let prepared = applyParamPolicies(body, choice.params, `model "${offering.id}" on ${ctx.route.manifest.path}`);
  prepared = applyParamPolicies(prepared, offering.params ?? {}, `model "${offering.id}"`);
  const translator = createTranslator(ctx.route.manifest.format, format, prepared, offering.id, { params: choice.params, offering, requestId: ctx.requestId, usage: provider.operations[choice.operation]!.usage });
  ctx.model = { offering, provider };
  ctx.upstream = { choice, format };
  ctx.body = prepared;
  ctx.translation = { translator, upstreamBody: null, upstreamQuery: null };
  routing.deployment = deployment;
  if (translate) translateFor(ctx);
}

/** The translate stage's work for the prepared deployment: the upstream body and query. */
export function translateFor(ctx: RequestContext): void {
  const translation = ctx.translation!;
  translation.upstreamBody = translation.translator.request(ctx.body, ctx.model!.offering, ctx.files);
  translation.upstreamQuery = translation.translator.query?.(ctx.body) ?? null;
}

/** The deployments of `offering` that may serve this request on `route` (issue 32 item 4), those on the pinned provider when state lives there (item 8). */
export function servingDeployments(offering: CompiledOffering, pinnedProvider: string | null | undefined, route: CompiledRoute): readonly CompiledDeployment[] {
  const all = offering.routeDeployments?.get(route) ?? offering.deployments;
  if (!pinnedProvider) return all;
  return all.filter((d) => d.provider.id === pinnedProvider);
}
