/**
 * Stage 3, route: the request's model (or the route's default offering) against the live catalogue
 * (spec 4.17: model_not_found, model_not_available), then the operation that serves it and the
 * translator for that operation's wire format. Creating the translator refuses what only the
 * translation knows (unsupported parameters and tools), and the meter refuses what the offering cannot
 * serve under it: both before anything is reserved.
 */
import { GatewayError } from '../../errors.js';
import { meterOf } from '../../meters/index.js';
import type { RequestContext } from '../context.js';
import { resolveFileInputs } from '../file-inputs.js';
import { resolveUrlInputs } from '../url-inputs.js';
import { checkOfferingFiles } from '../file-limits.js';
import { resolveFileReferences } from '../file-references.js';
import { needsFileProbes, probeFiles } from '../file-probes.js';
import { prepareSkillsExecution } from '../../skills/execution.js';
import { jobKindOf } from '../job-kinds.js';
import { skillsServices } from '../operation-ids.js';
import type { Runtime, Stage } from '../stage.js';
import type { CompiledDeployment, CompiledOffering, CompiledRoute } from '../../config/types.js';
import { chooseDeployment } from '../../routing/select.js';
import { prepareDeployment, servingDeployments } from '../deployment.js';
import { servingPlan, takeClientModels } from '../plan.js';
import { takesInput } from '../../config/upstream-choice.js';
import { prepareResponseStore } from '../response-store.js';
import { modelById } from '../../config/aliases.js';
import { checkKeyAllows } from '../key-models.js';

/**
 * The offering a request without `model` gets: the first of the route's defaults (cheapest first)
 * that can take this request's input, so that an image moderation is billed at the image rate and
 * not refused for the text offering's sake; the first default when none can (the 400 then names it).
 */
function defaultModelFor(ctx: RequestContext): string | null {
  const { route, gateway } = ctx;
  if (route.defaultModels.length < 2) return route.defaultModel;
  return route.defaultModels.find((id) => takesInput(gateway, route, gateway.offerings.get(id)!, ctx.body)) ?? route.defaultModel;
}

/** The requested offering, checked against the live catalogue and the route (spec 4.17). */
function requestedOffering(ctx: RequestContext): CompiledOffering {
  const id = ctx.body.model ?? defaultModelFor(ctx) ?? undefined;
  if (typeof id !== 'string') throw new GatewayError('invalid_request', "Missing required parameter: 'model'.", { param: 'model' });
  // An alias (issue 31 item 4) is the offering it names: its checks, its price, its usage rows.
  const offering = modelById(ctx.gateway, id);
  if (!offering || !offering.enabled) throw new GatewayError('model_not_found', `The model "${id}" does not exist; refresh the catalogue.`, { param: 'model' });
  // The key's allowed_models (issue 33 item 2), on the offering an alias names.
  checkKeyAllows(ctx, offering, id, 'model');
  if (offering.availability !== 'available') {
    const state = offering.availability === 'coming_soon' ? 'coming soon' : 'unavailable';
    throw new GatewayError('model_not_available', `The model "${id}" is ${state}; refresh the catalogue.`, { param: 'model' });
  }
  if (!ctx.route.serviceTypes.has(offering.serviceType)) {
    throw new GatewayError('model_not_available', `The model "${id}" is a ${offering.serviceType} model and is not served by ${ctx.route.manifest.path}.`, { param: 'model' });
  }
  return offering;
}

/**
 * Resolves `body.model` (or the route's default for this request) to an offering, its serving plan
 * (the client's `models` and the offering's fallbacks, issue 29 item 4) and the deployment the first
 * attempt goes to, prepared: its operation, policies and translator (src/pipeline/deployment.ts).
 */
export function routeRequest(ctx: RequestContext, runtime: Runtime): void {
  const offering = requestedOffering(ctx);
  const clientIds = takeClientModels(ctx);
  // A native previous response lives at one vendor (issue 29 item 8): the offering's first-listed deployment's.
  if (!ctx.pinnedProvider && offering.nativeResponses && typeof ctx.body.previous_response_id === 'string') ctx.pinnedProvider = offering.deployments[0]!.provider.id;
  const deployments = servingDeployments(offering, ctx.pinnedProvider, ctx.route);
  const first = chooseDeployment(deployments, NONE, offering.routing, runtime.deployments) ?? deployments[0] ?? offering.deployments[0]!;
  ctx.model = { offering: first.offering, provider: first.provider };
  meterOf(ctx)?.check(ctx);
  ctx.routing = { clientBody: ctx.body, plan: { chain: [offering], contextFallbacks: [], contentFallbacks: [] }, deployment: first, attempts: [], startedAt: performance.now(), current: null, cut: null, rescue: null, once: false };
  prepareDeployment(ctx, first, false);
  checkOfferingFiles(ctx.files, offering.files, offering.id);
  // A job outlives its request at the vendor that runs it (spec 4.16): its request is not failed over.
  if (jobKindOf(ctx.route)) ctx.pinnedProvider ??= first.provider.id;
  ctx.routing.plan = servingPlan(ctx, offering, clientIds);
}

const NONE: ReadonlySet<CompiledDeployment> = new Set();

/** A step a route declares around routing; each runs before anything is reserved. */
type RouteStep = (ctx: RequestContext) => Promise<void>;

/** The steps that rewrite the request before routing: file references (spec 4.4), temporary-file inputs (spec 4.7). */
function stepsBefore(route: CompiledRoute, runtime: Runtime): RouteStep[] {
  const steps: RouteStep[] = [];
  // A job route's own rules come first (spec 4.16: what a remix may not carry, and its source).
  const job = jobKindOf(route);
  if (job) steps.push((ctx) => job.service(runtime).prepare(ctx));
  // Stored responses first: a rebuilt conversation is what every later step and the translator see.
  if (route.manifest.response_store) steps.push((ctx) => prepareResponseStore(ctx, runtime));
  const policy = route.manifest.file_references;
  if (policy) steps.push((ctx) => resolveFileReferences(ctx, runtime, policy));
  if (route.manifest.file_inputs) steps.push((ctx) => resolveFileInputs(ctx, runtime, route.manifest.file_inputs!));
  // URL inputs after file inputs: a file put into a URL field becomes a data URL like the others.
  if (route.manifest.url_inputs) steps.push((ctx) => resolveUrlInputs(ctx, route.manifest.url_inputs!, runtime.urlResolver));
  // File parts measured for the meters (spec 4.8 audio duration), after a file_id became a part.
  const multipart = route.multipart;
  if (needsFileProbes(multipart)) {
    const alternatives = Object.fromEntries(Object.entries(route.manifest.file_inputs ?? {}).flatMap(([field, rule]) => (typeof rule.into === 'object' ? [[rule.into.file, field]] : [])));
    steps.push((ctx) => probeFiles(ctx, multipart, alternatives));
  }
  return steps;
}

/**
 * The checks that need the chosen model: a skills execution (spec 4.6). Its operation id, like any
 * route's, is claimed by admission (src/pipeline/stages/admission.ts).
 */
function stepsAfter(route: CompiledRoute, runtime: Runtime): RouteStep[] {
  const steps: RouteStep[] = [];
  if (route.manifest.skills_execution) {
    steps.push(async (ctx) => {
      skillsServices(runtime.files); // a gateway without publication runs no execution (400)
      prepareSkillsExecution(ctx);
      if (!ctx.features.includes('skills')) return;
      // Its container lives at the vendor that runs it (issue 29 item 8): no other source or model.
      ctx.pinnedProvider = ctx.model!.provider.id;
      ctx.routing!.plan = { chain: [ctx.routing!.plan.chain[0]!], contextFallbacks: [], contentFallbacks: [] };
      // An execution runs code at the vendor: its failure is recovered (spec 4.6), never retried.
      ctx.routing!.once = true;
    });
  }
  return steps;
}

/** Routes every proxy route's requests, with the steps its manifest declares around routing. */
export const routeStage: Stage = {
  name: 'route',
  compile: (route, runtime) => {
    if (route.manifest.handler !== 'proxy') return null;
    const before = stepsBefore(route, runtime);
    const after = stepsAfter(route, runtime);
    if (before.length === 0 && after.length === 0) return (ctx) => routeRequest(ctx, runtime);
    return async (ctx) => {
      for (const step of before) await step(ctx);
      routeRequest(ctx, runtime);
      for (const step of after) await step(ctx);
    };
  },
};
