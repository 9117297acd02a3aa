/**
 * Picks the operation a proxy route calls for a model: the first of the route's upstreams that the
 * model's provider offers and whose condition holds. A model no upstream of this route can serve
 * gets a 400 naming the endpoints that do serve it (spec 4.4: "other models use the
 * chat/completions-style endpoints").
 */
import type { CompiledGateway, CompiledOffering, CompiledProvider, CompiledRoute, RouteUpstream } from '../config/types.js';
import { GatewayError } from '../errors.js';

function matches(upstream: RouteUpstream, offering: CompiledOffering, provider: CompiledProvider): boolean {
  if (!provider.operations[upstream.operation]) return false;
  const native = upstream.when.nativeResponses;
  return native === undefined || native === offering.nativeResponses;
}

/** The route's upstream for this offering, or null. */
export function chooseUpstream(route: CompiledRoute, offering: CompiledOffering, provider: CompiledProvider): RouteUpstream | null {
  return route.upstreams.find((u) => matches(u, offering, provider)) ?? null;
}

/** The 400 for a model this route cannot serve, naming the endpoints that can. */
export function wrongEndpoint(gateway: CompiledGateway, route: CompiledRoute, offering: CompiledOffering, provider: CompiledProvider): GatewayError {
  const others = gateway.routes
    .filter((r) => r !== route && r.billable && r.serviceTypes.has(offering.serviceType) && chooseUpstream(r, offering, provider))
    .map((r) => r.manifest.path);
  const hint = others.length ? ` Use ${others.join(' or ')} instead.` : '';
  return new GatewayError('invalid_request', `The model "${offering.id}" is not served by ${route.manifest.path}.${hint}`, { param: 'model' });
}
