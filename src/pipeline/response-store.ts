/**
 * Stored responses on a route with `response_store: true` (issue 31 item 3; the Responses API's `store`, default
 * true, and `previous_response_id`). Before routing: a translated model's previous_response_id is
 * rebuilt from the store into `input` (the earlier turns, that response's input and output, then
 * this request's input), so the upstream receives the whole conversation and bills it as it
 * reports; the id stays in the body for the Response's echo. A passthrough model's is the vendor's
 * to resolve: it is forwarded as sent, pinned to the vendor that holds it, and only for the account
 * that created it. After billing: the answer is kept (translated) or its owner recorded (passthrough).
 */
import { GatewayError } from '../errors.js';
import { jsonWithCost } from '../formats/usage-cost.js';
import { SseParser } from '../translate/sse.js';
import type { ResponseRecords } from '../responses/records.js';
import { conversationOf, inputItems } from '../responses/items.js';
import type { RequestContext } from './context.js';
import type { Runtime } from './stage.js';

type Json = Record<string, unknown>;

/** The Responses API's answer to a previous_response_id it does not hold (unknown, another account's, expired). */
function previousNotFound(id: string): GatewayError {
  return new GatewayError('previous_response_not_found', `Previous response with id '${id}' not found.`, { param: 'previous_response_id' });
}

/** The store, or a 503-class error on a gateway built without one. */
export function responseRecords(runtime: Runtime): ResponseRecords {
  if (!runtime.responses) throw new GatewayError('upstream_unavailable', 'Stored responses are not available on this gateway.');
  return runtime.responses;
}

/** The final Response of a stream, from the frames that carry it (`response.completed`, `response.incomplete`). */
function streamTap(): { tap: (frames: readonly string[]) => void; final: () => Json | null } {
  let final: Json | null = null;
  return {
    tap: (frames) => {
      for (const frame of frames) {
        if (!frame.startsWith('event: response.completed') && !frame.startsWith('event: response.incomplete')) continue;
        for (const event of new SseParser().push(frame)) {
          try { final = (JSON.parse(event.data) as { response?: Json }).response ?? final; } catch { /* not JSON: nothing kept */ }
        }
      }
    },
    final: () => final,
  };
}

/**
 * The Response as its client got it: with `usage.cost` (issue 31 item 12), what the request was
 * charged, so a retrieve answers what the create did.
 */
function withCost(ctx: RequestContext, response: Json): Json {
  const places = ctx.format.usageCost;
  if (!places) return response;
  const text = jsonWithCost(response, places.answer, ctx.chargedNano ?? 0n);
  return text === null ? response : (JSON.parse(text) as Json);
}

/** The route step: resolves previous_response_id, and arranges for the answer to be kept. */
export async function prepareResponseStore(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const records = runtime.responses;
  if (!records) return;
  const body = ctx.body;
  const offering = typeof body.model === 'string' ? ctx.gateway.offerings.get(body.model) : undefined;
  if (!offering) return; // routing answers the unknown model
  const accountId = ctx.auth!.accountId;
  const previousId = typeof body.previous_response_id === 'string' ? body.previous_response_id : null;
  const previous = previousId === null ? null : await records.get(accountId, previousId);
  if (previousId !== null && (!previous || (previous.providerId === null) === offering.nativeResponses)) throw previousNotFound(previousId);
  const items = inputItems(body.input);
  const context = previous && !offering.nativeResponses ? conversationOf(previous) : [];
  if (previous && !offering.nativeResponses) ctx.body = { ...body, input: [...context, ...items] };
  if (previous?.providerId) ctx.pinnedProvider = previous.providerId;
  if (body.store === false) return;
  const tap = ctx.route.manifest.stream ? streamTap() : null;
  if (tap) ctx.streamTap = tap.tap;
  ctx.beforeAnswer.push(async () => {
    const outcome = ctx.outcome;
    if (outcome?.delivery !== 'full') return;
    const response = ctx.stream ? tap?.final() ?? null : (outcome.answer?.clientBody as Json | undefined) ?? null;
    if (!response || typeof response.id !== 'string') return;
    const native = ctx.model!.offering.nativeResponses;
    // Kept after billing; a store that fails here does not take back an answer already paid for.
    await records.save({
      id: response.id, accountId, providerId: native ? ctx.model!.provider.id : null, response: native ? null : withCost(ctx, response),
      inputItems: native ? [] : items, context: native ? [] : context,
    }).catch((error: unknown) => runtime.logger?.warn({ error: String(error), response: response.id }, 'stored response not saved'));
  });
}
