/**
 * Stream rescue (issue 29 item 6): a stream that died, errored or stalled after content reached the
 * client is continued on the next source when that source's offering declares `continuation: prefill`
 * (messages-format models that accept an assistant prefill). The text the client has is sent as the
 * assistant's prefix and the rest streams on as one answer: the continuation's opening frames (its
 * role chunk, its message_start) are not written, only its content and its end.
 *
 * Money stays exact: what was delivered before the cut is billed (as any partial answer, on the
 * deployment that delivered it) and the continuation's own usage on top, nothing twice; a rescue is
 * made only when the request's hold covers both, so it can never charge more than was reserved.
 * Without a target, or when the target refuses (its prefill rejected, say), the stream ends with the
 * cut's own error in the client's format, never as a normal finish.
 */
import type { CompiledDeployment } from '../config/types.js';
import { meterOf } from '../meters/index.js';
import type { Bill } from '../meters/types.js';
import type { CarriedBill, RequestContext } from './context.js';
import { prepareDeployment } from './deployment.js';

/** Adds a bill to what a rescued request carries; the rows keep the deployment that delivered them. */
function carry(carried: CarriedBill | null, bill: Bill, deployment: string): CarriedBill {
  const rows = bill.rows.map((r) => ({ ...r, deployment: r.deployment ?? deployment }));
  return {
    rows: [...(carried?.rows ?? []), ...rows], limiterUnits: (carried?.limiterUnits ?? 0) + bill.limiterUnits,
    observers: [...(carried?.observers ?? []), bill.observe],
  };
}

/** The request's state a refused rescue puts back (it was prepared for the target to price it). */
function snapshot(ctx: RequestContext): () => void {
  const { model, upstream, body, translation } = ctx;
  const { deployment, clientBody } = ctx.routing!;
  return () => {
    Object.assign(ctx, { model, upstream, body, translation });
    Object.assign(ctx.routing!, { deployment, clientBody });
  };
}

/**
 * Prepares the continuation of a cut stream on `target` (the loop's next deployment); false when no
 * rescue is made (the target does not continue, the request is not a plain text conversation, or the
 * hold cannot cover it), the request then left as it was.
 */
export function prepareRescue(ctx: RequestContext, failed: CompiledDeployment, target: CompiledDeployment | null): boolean {
  const routing = ctx.routing!;
  const cut = routing.cut;
  const meter = meterOf(ctx);
  const hold = ctx.hold;
  const messages = routing.clientBody.messages;
  // A cut tool call cannot be continued as text: only conversations without tools are rescued.
  if (!cut || !target || target.offering.continuation !== 'prefill' || !meter || !hold?.open || !Array.isArray(messages) || routing.clientBody.tools !== undefined) return false;
  const delivered = meter.bill(ctx, ctx.outcome!, hold.inputEstimate);
  if (!delivered) return false;
  const prefix = (routing.rescue?.prefix ?? '') + cut.delivered;
  // The messages format refuses a prefill that ends with whitespace; the continuation then starts with it.
  const prefill = prefix.replace(/\s+$/, '');
  if (prefill === '') return false;
  const restore = snapshot(ctx);
  try {
    routing.clientBody = { ...routing.clientBody, messages: [...messages, { role: 'assistant', content: prefill }] };
    prepareDeployment(ctx, target, true);
    const quote = meter.quote(ctx, meter.demand(ctx), target.offering);
    const carried = carry(routing.rescue?.carried ?? null, delivered, failed.id);
    const owed = carried.rows.reduce((sum, r) => sum + r.amountNano, 0n);
    if (owed + quote.amountNano > hold.amountNano) { restore(); return false; }
    routing.rescue = { carried, tail: routing.rescue?.tail ?? cut.tail, prefix };
    routing.cut = null;
    // What was delivered is carried now: the meter must not bill it again from the outcome.
    ctx.outcome = { delivery: 'none', reported: null, deliveredText: '' };
    return true;
  } catch {
    // The target cannot take the continued request (a parameter its format refuses): no rescue.
    restore();
    return false;
  }
}

/**
 * A rescue whose continuation failed before content: the client's stream ends with the first cut's
 * error (never the continuation's own, e.g. its prefill's 400), and what was delivered is billed.
 */
export function endRescue(ctx: RequestContext): void {
  const rescue = ctx.routing!.rescue!;
  ctx.outcome = { delivery: 'none', reported: null, deliveredText: '' };
  ctx.finish = () => { ctx.reply.raw.end(rescue.tail); };
}

/** The request's bill: the continuation's (or none) and what a rescue carried from before it. */
export function withCarried(ctx: RequestContext, bill: Bill | null): Bill | null {
  const carried = ctx.routing?.rescue?.carried;
  if (!carried) return bill;
  return {
    rows: [...carried.rows, ...(bill?.rows ?? [])], limiterUnits: carried.limiterUnits + (bill?.limiterUnits ?? 0),
    observe: (metrics) => { for (const observe of carried.observers) observe(metrics); bill?.observe(metrics); },
    headers: bill?.headers ?? {},
  };
}
