/**
 * The stored-response routes answered by the gateway (issue 31 item 3, the Responses API's getResponse,
 * deleteResponse and listInputItems): only the caller's live responses exist; another account's,
 * an unknown or an expired id is the Responses API's 404. A passthrough model's response is kept by its vendor:
 * the gateway holds only whose it is, so these routes answer it as absent (README "Clients").
 * All free (spec 1).
 */
import { GatewayError } from '../../errors.js';
import { itemPage } from '../../responses/items.js';
import type { StoredResponse } from '../../responses/records.js';
import type { RequestContext } from '../context.js';
import { responseRecords } from '../response-store.js';
import type { Runtime } from '../stage.js';
import { intQuery } from './query.js';

function notFound(id: string): GatewayError {
  return new GatewayError('not_found', `Response with id '${id}' not found.`, { param: 'response_id' });
}

/** The caller's live response kept by the gateway, or the Responses API's 404. */
async function owned(ctx: RequestContext, runtime: Runtime): Promise<StoredResponse> {
  const id = ctx.params.response_id ?? '';
  const record = await responseRecords(runtime).get(ctx.auth!.accountId, id);
  if (!record?.response) throw notFound(id);
  return record;
}

async function send(ctx: RequestContext, body: Record<string, unknown>): Promise<void> {
  ctx.started = true;
  await ctx.reply.code(200).header('content-type', 'application/json; charset=utf-8').send(body);
}

/** GET /v1/responses/{response_id}: the Response as it was answered. */
export async function getStoredResponse(ctx: RequestContext, runtime: Runtime): Promise<void> {
  await send(ctx, (await owned(ctx, runtime)).response!);
}

/** DELETE /v1/responses/{response_id}: gone at once; a second delete is 404, as the Responses API answers it. */
export async function deleteStoredResponse(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const { id } = await owned(ctx, runtime);
  if (!(await responseRecords(runtime).delete(ctx.auth!.accountId, id))) throw notFound(id);
  await send(ctx, { id, object: 'response', deleted: true });
}

/** GET /v1/responses/{response_id}/input_items?limit=&order=&after= (limit 1 to 100, default 20; order desc by default). */
export async function listStoredInputItems(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const query = ctx.req.query as Record<string, unknown>;
  const limit = intQuery(ctx, 'limit', 1, 100, 20);
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new GatewayError('invalid_request', "order must be 'asc' or 'desc'.", { param: 'order' });
  const after = typeof query.after === 'string' ? query.after : null;
  const record = await owned(ctx, runtime);
  await send(ctx, itemPage(record.inputItems, limit, order, after));
}
