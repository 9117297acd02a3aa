/**
 * Model discovery answered by the gateway itself (spec 4.17): identity fields only, free, and
 * working at zero balance. Lists enabled, available offerings of the route's service types, or of
 * `?service_type=` when given, each followed by its aliases as entries of their own (issue 31 item 4:
 * both vendors' models APIs list dated ids as models, and retrieve answers for them).
 *
 * One shape both official SDKs parse (issue 31 item 5): each model has the completions-style format's
 * `id`, `object`, `created`, `owned_by` and the messages-style format's `type`, `display_name`,
 * `created_at`; the list has the former's `object` and `data` and the latter's `has_more`,
 * `first_id`, `last_id`, and takes the latter's paging query (`limit` 1 to 1000, `after_id`,
 * `before_id`; ../shared/specs, models_list). Without `limit` the whole list is one page: the
 * completions-style list has no paging, so its clients read one answer (the messages-style default of
 * 20 would cut them short); the messages-style SDK follows `last_id` as `after_id` while `has_more`.
 */
import type { CompiledOffering } from '../../config/types.js';
import { modelById } from '../../config/aliases.js';
import { GatewayError } from '../../errors.js';
import { keyAllows } from '../key-models.js';
import type { RequestContext } from '../context.js';

/** One model object, under `id` (the offering's, or one of its aliases). */
function identity(offering: CompiledOffering, id = offering.id): Record<string, unknown> {
  return {
    id, object: 'model', created: offering.created, owned_by: offering.providerId,
    // The messages-style ModelInfo: created_at is RFC 3339 (the epoch when the release date is unknown, as its spec allows).
    type: 'model', display_name: offering.displayName ?? offering.id, created_at: new Date(offering.created * 1000).toISOString().replace('.000Z', 'Z'),
  };
}

/** A query parameter as one string, or undefined; a repeated one is refused. */
function queryText(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || typeof value === 'string') return value;
  throw new GatewayError('invalid_request', `The query parameter '${name}' may be given once.`, { param: name });
}

/** The messages-style `limit`: a whole number from 1 to 1000; undefined when absent (the whole list). */
function pageLimit(query: Record<string, unknown>): number | undefined {
  const text = queryText(query, 'limit');
  if (text === undefined) return undefined;
  const limit = /^\d{1,4}$/.test(text) ? Number(text) : NaN;
  if (!(limit >= 1 && limit <= 1000)) throw new GatewayError('invalid_request', `'limit' must be a whole number from 1 to 1000, got ${JSON.stringify(text.slice(0, 32))}.`, { param: 'limit' });
  return limit;
}

/** The position of a cursor id in the list; an id that is not listed is refused. */
function cursorAt(ids: readonly string[], name: string, id: string): number {
  const at = ids.indexOf(id);
  if (at < 0) throw new GatewayError('invalid_request', `'${name}' names "${id.slice(0, 64)}", which this list does not hold.`, { param: name });
  return at;
}

/** One page of `entries` under the messages-style paging query: the page and whether more lie in its direction. */
function page(entries: Array<Record<string, unknown>>, query: Record<string, unknown>): { data: Array<Record<string, unknown>>; hasMore: boolean } {
  const limit = pageLimit(query);
  const after = queryText(query, 'after_id');
  const before = queryText(query, 'before_id');
  if (after !== undefined && before !== undefined) throw new GatewayError('invalid_request', "Give 'after_id' or 'before_id', not both.", { param: 'before_id' });
  const ids = entries.map((e) => e.id as string);
  const size = limit ?? entries.length;
  if (before !== undefined) {
    const end = cursorAt(ids, 'before_id', before);
    return { data: entries.slice(Math.max(0, end - size), end), hasMore: end - size > 0 };
  }
  const start = after === undefined ? 0 : cursorAt(ids, 'after_id', after) + 1;
  return { data: entries.slice(start, start + size), hasMore: start + size < entries.length };
}

/** GET /v1/models */
export async function listModels(ctx: RequestContext): Promise<void> {
  const query = ctx.req.query as Record<string, unknown>;
  const requested = typeof query.service_type === 'string' ? query.service_type.toUpperCase() : null;
  const wanted = (o: CompiledOffering): boolean => (requested ? o.serviceType === requested : ctx.route.serviceTypes.has(o.serviceType));
  // A key with `allowed_models` (issue 33 item 2) sees only the offerings it may use.
  const listed = [...ctx.gateway.offerings.values()].filter((o) => o.enabled && o.availability === 'available' && wanted(o) && keyAllows(ctx, o));
  const entries = listed.flatMap((o) => [identity(o), ...(o.aliases ?? []).map((alias) => identity(o, alias))]);
  const { data, hasMore } = page(entries, query);
  ctx.started = true;
  await ctx.reply.send({ object: 'list', data, has_more: hasMore, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null });
}

/** GET /v1/models/{model}: an offering's id, or one of its aliases under its own id. */
export async function getModel(ctx: RequestContext): Promise<void> {
  const id = ctx.params.model ?? '';
  const offering = modelById(ctx.gateway, id);
  if (!offering || !offering.enabled) throw new GatewayError('model_not_found', `The model "${id}" does not exist; refresh the catalogue.`, { status: 404 });
  if (offering.availability !== 'available') throw new GatewayError('model_not_available', `The model "${id}" is not available; refresh the catalogue.`, { status: 404 });
  if (!keyAllows(ctx, offering)) throw new GatewayError('model_not_found', `The model "${id}" does not exist for this key; refresh the catalogue.`, { status: 404 });
  ctx.started = true;
  await ctx.reply.send(identity(offering, id));
}
