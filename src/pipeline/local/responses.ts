/**
 * The stored-response routes answered by the gateway (issue 31 item 3, the Responses API's getResponse,
 * deleteResponse and listInputItems): only the caller's live responses exist; another account's,
 * an unknown or an expired id is the Responses API's 404. A passthrough model's response is kept by its
 * vendor: the gateway holds whose it is and asks that provider (its `responses-get`, `responses-delete`
 * and `responses-input-items` operations) for its owner only. All free (spec 1).
 */
import { GatewayError } from '../../errors.js';
import { readBounded } from '../../upstream/body.js';
import { itemPage } from '../../responses/items.js';
import type { StoredResponse } from '../../responses/records.js';
import type { RequestContext } from '../context.js';
import { responseRecords } from '../response-store.js';
import type { Runtime } from '../stage.js';
import { intQuery } from './query.js';

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `Response with id '${id}' not found.`, { param: 'response_id' });
}

/** The caller's live response (kept by the gateway, or by a passthrough model's vendor), or the Responses API's 404. */
async function owned(ctx: RequestContext, runtime: Runtime): Promise<StoredResponse> {
  const id = ctx.params.response_id ?? '';
  const record = await responseRecords(runtime).get(ctx.auth!.accountId, id);
  if (!record || (!record.response && !record.providerId)) throw notFound(id);
  return record;
}

/** Upstream answers of a vendor's store are small JSON documents; this bounds a misbehaving one. */
const VENDOR_ANSWER_MAX = 8 * 1024 * 1024;

/**
 * Asks the vendor that keeps a passthrough response (`operation` of its provider) and answers what it
 * says: its 200 as sent, its 404 as the gateway's; a provider without the operation, or any other
 * answer, is the gateway's error, never the vendor's body.
 */
async function fromVendor(ctx: RequestContext, runtime: Runtime, record: StoredResponse, operation: string, query?: Record<string, string[]>): Promise<Record<string, unknown>> {
  const provider = ctx.gateway.providers.get(record.providerId!);
  if (!provider?.operations[operation]) throw notFound(record.id);
  const response = await runtime.upstream.send(provider, operation, null, ctx.work, { pathParams: { response_id: record.id }, query: query ?? null });
  const data = await readBounded(response, VENDOR_ANSWER_MAX);
  if (response.status === 404) throw notFound(record.id);
  if (response.status !== 200) throw new GatewayError('upstream_error', `The upstream provider answered ${response.status} for response '${record.id}'.`);
  try { return JSON.parse(data.toString('utf8')) as Record<string, unknown>; } catch {
    throw new GatewayError('upstream_error', 'The upstream provider sent a malformed answer.');
  }
}

async function send(ctx: RequestContext, body: Record<string, unknown>): Promise<void> {
  ctx.started = true;
  await ctx.reply.code(200).header('content-type', 'application/json; charset=utf-8').send(body);
}

/** GET /v1/responses/{response_id}: the Response as it was answered. */
export async function getStoredResponse(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const record = await owned(ctx, runtime);
  await send(ctx, record.response ?? await fromVendor(ctx, runtime, record, 'responses-get'));
}

/** DELETE /v1/responses/{response_id}: gone at once; a second delete is 404, as the Responses API answers it. */
export async function deleteStoredResponse(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const record = await owned(ctx, runtime);
  const { id } = record;
  const answer = record.response ? { id, object: 'response', deleted: true } : await fromVendor(ctx, runtime, record, 'responses-delete');
  if (!(await responseRecords(runtime).delete(ctx.auth!.accountId, id))) throw notFound(id);
  await send(ctx, answer);
}

/** GET /v1/responses/{response_id}/input_items?limit=&order=&after= (limit 1 to 100, default 20; order desc by default). */
export async function listStoredInputItems(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const query = ctx.req.query as Record<string, unknown>;
  const limit = intQuery(ctx, 'limit', 1, 100, 20);
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new GatewayError('invalid_request', "order must be 'asc' or 'desc'.", { param: 'order' });
  const after = typeof query.after === 'string' ? query.after : null;
  const record = await owned(ctx, runtime);
  if (record.response) return send(ctx, itemPage(record.inputItems, limit, order, after));
  const forwarded: Record<string, string[]> = { limit: [String(limit)], order: [order] };
  if (after !== null) forwarded.after = [after];
  await send(ctx, await fromVendor(ctx, runtime, record, 'responses-input-items', forwarded));
}
