/**
 * Picks the operation a proxy route calls for a model: the first of the route's upstreams that the
 * model's provider offers and whose conditions hold, on the model (`native_responses`) and on the
 * request (`present`, `absent`: read after the route's `file_inputs` rewrote it, so a file_id request
 * routes as its inline form: spec 4.11, 4.12). A model no upstream of this route can serve gets a 400
 * naming the endpoints that do serve it (spec 4.4: "other models use the chat/completions-style
 * endpoints").
 */
import type { CompiledGateway, CompiledOffering, CompiledProvider, CompiledRoute, RouteUpstream } from './types.js';
import { GatewayError } from '../errors.js';
import { readPointer } from '../meters/pointer.js';

function servesModel(upstream: RouteUpstream, offering: CompiledOffering, provider: CompiledProvider): boolean {
  if (!provider.operations[upstream.operation]) return false;
  // An offering may be limited to some of its provider's operations (spec 4.14: dall-e-3 cannot edit).
  if (offering.operations && !offering.operations.has(upstream.operation)) return false;
  const native = upstream.when.nativeResponses;
  return native === undefined || native === offering.nativeResponses;
}

function servesRequest(upstream: RouteUpstream, body: unknown): boolean {
  const { present, absent } = upstream.when;
  return (present === undefined || readPointer(body, present) !== undefined) && (absent === undefined || readPointer(body, absent) === undefined);
}

/** The route's upstream for this offering and request body (an empty body when absent), or null. */
export function chooseUpstream(route: CompiledRoute, offering: CompiledOffering, provider: CompiledProvider, body: unknown = {}): RouteUpstream | null {
  return route.upstreams.find((u) => servesModel(u, offering, provider) && servesRequest(u, body)) ?? null;
}

/** Whether the offering can take this request's input on this route (its provider's operations and the upstreams' conditions). */
export function takesInput(gateway: CompiledGateway, route: CompiledRoute, offering: CompiledOffering, body: unknown): boolean {
  return chooseUpstream(route, offering, gateway.providers.get(offering.providerId)!, body) !== null;
}

/** True when some request can reach the offering on this route (conditions on the request aside): boot checks and hints. */
export function servesOffering(route: CompiledRoute, offering: CompiledOffering, provider: CompiledProvider): boolean {
  return route.upstreams.some((u) => servesModel(u, offering, provider));
}

/**
 * The 400 for a model this route cannot serve, naming the endpoints that can; or for a model that
 * cannot take this request's input here (`body`), naming the route's offerings that can.
 */
export function wrongEndpoint(gateway: CompiledGateway, route: CompiledRoute, offering: CompiledOffering, provider: CompiledProvider, body: unknown = {}): GatewayError {
  if (servesOffering(route, offering, provider)) {
    const able = [...gateway.offerings.values()].filter((o) => o.enabled && o.availability === 'available' && route.serviceTypes.has(o.serviceType)
      && takesInput(gateway, route, o, body)).map((o) => `"${o.id}"`).slice(0, 3);
    const hint = able.length ? `use ${able.join(' or ')} instead` : 'choose another model';
    return new GatewayError('invalid_request', `The model "${offering.id}" cannot take this request's input on ${route.manifest.path}; ${hint}.`, { param: 'model' });
  }
  const others = gateway.routes
    .filter((r) => r !== route && r.billable && r.serviceTypes.has(offering.serviceType) && servesOffering(r, offering, provider))
    .map((r) => r.manifest.path);
  const hint = others.length ? ` Use ${others.join(' or ')} instead.` : '';
  return new GatewayError('invalid_request', `The model "${offering.id}" is not served by ${route.manifest.path}.${hint}`, { param: 'model' });
}
