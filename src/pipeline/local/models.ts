/**
 * Model discovery answered by the gateway itself (spec 4.17): identity fields only, free, and
 * working at zero balance. Lists enabled, available offerings of the route's service types, or of
 * `?service_type=` when given.
 */
import type { CompiledOffering } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import type { RequestContext } from '../context.js';

function identity(offering: CompiledOffering): Record<string, unknown> {
  return { id: offering.id, object: 'model', created: offering.created, owned_by: offering.providerId };
}

/** GET /v1/models */
export async function listModels(ctx: RequestContext): Promise<void> {
  const query = ctx.req.query as Record<string, unknown>;
  const requested = typeof query.service_type === 'string' ? query.service_type.toUpperCase() : null;
  const wanted = (o: CompiledOffering): boolean => (requested ? o.serviceType === requested : ctx.route.serviceTypes.has(o.serviceType));
  const data = [...ctx.gateway.offerings.values()].filter((o) => o.enabled && o.availability === 'available' && wanted(o)).map(identity);
  ctx.started = true;
  await ctx.reply.send({ object: 'list', data });
}

/** GET /v1/models/{model} */
export async function getModel(ctx: RequestContext): Promise<void> {
  const id = ctx.params.model ?? '';
  const offering = ctx.gateway.offerings.get(id);
  if (!offering || !offering.enabled) throw new GatewayError('model_not_found', `The model "${id}" does not exist; refresh the catalogue.`, { status: 404 });
  if (offering.availability !== 'available') throw new GatewayError('model_not_available', `The model "${id}" is not available; refresh the catalogue.`, { status: 404 });
  ctx.started = true;
  await ctx.reply.send(identity(offering));
}
