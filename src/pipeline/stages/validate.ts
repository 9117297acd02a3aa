/**
 * Stage 2, validate: the request body against the route's wire schema (compiled at boot), then the
 * model against the live catalogue (spec 4.17: model_not_found, model_not_available).
 */
import type { ErrorObject } from 'ajv';
import { GatewayError } from '../../errors.js';
import type { RequestContext } from '../context.js';
import type { Stage } from '../stage.js';
import { applyParamPolicies } from '../../translate/params.js';
import { createTranslator } from '../../translate/registry.js';
import { MAX_BODY_DEPTH, nestedDeeperThan } from '../depth.js';
import { chooseUpstream, wrongEndpoint } from '../upstream-choice.js';

function schemaMessage(error: ErrorObject): { message: string; param: string | null } {
  const param = error.instancePath ? error.instancePath.slice(1).replace(/\//g, '.') : null;
  if (error.keyword === 'required') {
    const missing = String(error.params.missingProperty);
    return { message: `Missing required parameter: '${param ? `${param}.` : ''}${missing}'.`, param: param ? `${param}.${missing}` : missing };
  }
  return { message: `Invalid '${param ?? 'body'}': ${error.message ?? 'invalid value'}.`, param };
}

/** Resolves `body.model` to an offering this route serves. */
export function resolveModel(ctx: RequestContext): void {
  const id = ctx.body.model;
  if (typeof id !== 'string') throw new GatewayError('invalid_request', "Missing required parameter: 'model'.", { param: 'model' });
  const offering = ctx.gateway.offerings.get(id);
  if (!offering || !offering.enabled) throw new GatewayError('model_not_found', `The model "${id}" does not exist; refresh the catalogue.`, { param: 'model' });
  if (offering.availability !== 'available') {
    const state = offering.availability === 'coming_soon' ? 'coming soon' : 'unavailable';
    throw new GatewayError('model_not_available', `The model "${id}" is ${state}; refresh the catalogue.`, { param: 'model' });
  }
  if (!ctx.route.serviceTypes.has(offering.serviceType)) {
    throw new GatewayError('model_not_available', `The model "${id}" is a ${offering.serviceType} model and is not served by ${ctx.route.manifest.path}.`, { param: 'model' });
  }
  const provider = ctx.gateway.providers.get(offering.providerId)!;
  ctx.model = { offering, provider };
  const choice = chooseUpstream(ctx.route, offering, provider);
  if (!choice) throw wrongEndpoint(ctx.gateway, ctx.route, offering, provider);
  const format = provider.operations[choice.operation]!.format;
  ctx.upstream = { choice, format };
  ctx.body = applyParamPolicies(ctx.body, choice.params, `model "${id}" on ${ctx.route.manifest.path}`);
  // Creating the translator validates what only the translation knows (unsupported parameters and tools).
  const translator = createTranslator(ctx.route.manifest.format, format, ctx.body, offering.id, { params: choice.params });
  ctx.translation = { translator, upstreamBody: null };
}

/** Rejects a request missing a required header (e.g. the messages format's version header). */
function checkHeaders(ctx: RequestContext): void {
  for (const header of ctx.route.requiredHeaders) {
    const value = [header.name, ...header.aliases].map((n) => ctx.req.headers[n]).find((v) => typeof v === 'string');
    if (typeof value !== 'string') {
      throw new GatewayError('invalid_request', `The ${header.name} header is required (accepted: ${[...header.values].join(', ')}).`);
    }
    if (!header.values.has(value.trim())) {
      throw new GatewayError('invalid_request', `Unsupported ${header.name}: ${JSON.stringify(value)} (accepted: ${[...header.values].join(', ')}).`);
    }
  }
}

/** Validates bodies of routes that declare a request schema; resolves the model on proxy routes. */
export const validateStage: Stage = {
  name: 'validate',
  compile: (route) => {
    const validate = route.validateRequest;
    if (!validate) return null;
    const pointer = route.streamPointer;
    const proxy = route.manifest.handler === 'proxy';
    return (ctx) => {
      checkHeaders(ctx);
      const body = ctx.req.body;
      if (!body || typeof body !== 'object' || Array.isArray(body)) throw new GatewayError('invalid_request', 'The request body must be a JSON object.');
      if (nestedDeeperThan(body)) throw new GatewayError('invalid_request', `The request body nests deeper than ${MAX_BODY_DEPTH} levels.`);
      if (!validate(body)) {
        const { message, param } = schemaMessage(validate.errors![0]!);
        throw new GatewayError('invalid_request', message, { param });
      }
      ctx.body = body as Record<string, unknown>;
      if (pointer) {
        let value: unknown = body;
        for (const key of pointer) value = (value as Record<string, unknown> | undefined)?.[key];
        ctx.stream = value === true;
      }
      if (proxy) resolveModel(ctx);
    };
  },
};
