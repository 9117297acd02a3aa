/**
 * One hold's whole life, in one place (DESIGN.md "Reserve, then settle"; issue 9 point 5). The stages
 * and the job poller call these and nothing else touches a hold:
 *  - reserveHold (admission): the meter's quote, reserved in one guarded statement, or the 402;
 *  - checkpointHold (a running stream): kept alive, with the usage delivered so far recorded on it;
 *  - settleHold (meter): the bill charged, retried through a store outage (settling twice charges once);
 *  - releaseHold (meter, or any failure): given back, deferred to the ledger's backlog during an outage;
 *  - handHoldToJob (meter, on a job route; spec 4.16): the accepted job takes the hold over, and the
 *    request ends without settling or releasing it. From then on the job's poller (src/videos/poller.ts)
 *    keeps it alive while the job runs (keepJobHold), settles it with what the job produced
 *    (settleJobHold) or gives it back when the job fails (releaseJobHold).
 * After a crash the sweeper settles a hold's last checkpoint, or gives it back (migration 005).
 */
import { DependencyUnavailableError, GatewayError } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import type { UsageRowInput } from '../ledger/types.js';
import type { Bill, Demand, Meter, Quote } from '../meters/types.js';
import { retryWhileUnavailable } from '../store/retry.js';
import type { RequestContext } from './context.js';
import { jobKindOf } from './job-kinds.js';
import { reachable } from './plan.js';
import type { Runtime } from './stage.js';

/** The 402 for a refused hold (spec 7): what it needed, what the account has, and how to fit (issue 8 item 6). */
async function insufficientBalance(ctx: RequestContext, runtime: Runtime, quote: Quote): Promise<GatewayError> {
  const account = await runtime.ledger.getAccount(ctx.auth!.accountId);
  if (!account) return new GatewayError('insufficient_balance', 'Insufficient balance: the account cannot cover the maximum cost of this request.');
  const { message, param } = quote.refusal(account);
  return new GatewayError('insufficient_balance', message, { param });
}

/**
 * The meter's quote for the dearest offering the request may reach (issue 29 item 4: a fallback may
 * cost more than the requested model, and one hold covers whichever serves).
 */
function dearestQuote(ctx: RequestContext, meter: Meter, demand: Demand): Quote {
  let quote = meter.quote(ctx, demand);
  const offerings = ctx.routing ? reachable(ctx.routing.plan) : [];
  for (const offering of offerings.length > 1 ? offerings : []) {
    if (offering.billing.unit !== ctx.model!.offering.billing.unit) continue;
    const other = meter.quote(ctx, demand, offering);
    if (other.amountNano > quote.amountNano) quote = other;
  }
  return quote;
}

/**
 * What a stream that may be rescued (issue 29 item 6) holds on top of its quote: a second answer's
 * worth, so that the part delivered before a cut and the continuation can both be billed within the
 * hold; nothing when no offering the request may reach continues a cut stream.
 */
function rescueReserve(ctx: RequestContext, quote: Quote): bigint {
  if (!ctx.stream || !ctx.routing) return 0n;
  return reachable(ctx.routing.plan).some((o) => o.continuation === 'prefill') ? quote.amountNano : 0n;
}

/**
 * Reserves the meter's quote for the request, or throws the 402; no upstream call without a hold. A
 * stream that may be rescued first asks for its rescue reserve too; an account that cannot hold both
 * is held for the quote alone (its stream then ends with an error if cut, never a spurious 402).
 */
export async function reserveHold(ctx: RequestContext, runtime: Runtime, meter: Meter, demand: Demand): Promise<void> {
  const settings = ctx.gateway.settings;
  const quote = dearestQuote(ctx, meter, demand);
  const { inputEstimate } = quote;
  const extra = rescueReserve(ctx, quote);
  const amounts = extra > 0n ? [quote.amountNano + extra, quote.amountNano] : [quote.amountNano];
  // A job's hold lives as long as the job may run (spec 4.16): the poller extends it, and a crash
  // longer than the usual margin must not let the sweeper give back what a finishing job will bill.
  const job = jobKindOf(ctx.route);
  const ttlMs = job ? job.deadlineMs(settings) + settings.holdTtlMs : settings.holdTtlMs;
  for (const amountNano of amounts) {
    let reserved: boolean;
    try {
      reserved = await runtime.ledger.reserve({ holdId: ctx.requestId, accountId: ctx.auth!.accountId, amountNano, ttlMs });
    } catch (error) {
      // The store went away: the reserve may have committed before its answer was lost, so the hold
      // is given back like any failed request's (a release of a hold that does not exist is a no-op).
      if (error instanceof DependencyUnavailableError) ctx.hold = { id: ctx.requestId, amountNano, inputEstimate, open: true };
      throw error;
    }
    if (reserved) {
      ctx.hold = { id: ctx.requestId, amountNano, inputEstimate, open: true };
      return;
    }
  }
  throw await insufficientBalance(ctx, runtime, quote);
}

/** Gives the hold back, if still open: nothing charged. During a store outage it waits in the ledger's backlog. */
export async function releaseHold(ctx: RequestContext, runtime: Runtime): Promise<void> {
  if (!ctx.hold?.open) return;
  ctx.hold.open = false;
  await runtime.ledger.releaseOrDefer(ctx.hold.id);
}

/** The rows with the deployment that served the request (issue 29 item 7), when one did. */
function servedBy(ctx: RequestContext, rows: UsageRowInput[]): UsageRowInput[] {
  const deployment = ctx.routing?.deployment.id;
  return deployment ? rows.map((r) => (r.deployment ? r : { ...r, deployment })) : rows;
}

/** Charges the bill against the hold and closes it; the settled figures go in the answer's headers. */
export async function settleHold(ctx: RequestContext, runtime: Runtime, bill: Bill): Promise<void> {
  const hold = ctx.hold!;
  hold.open = false;
  hold.settled = true;
  // Settling twice charges once, so a settle is retried through a store outage (the answer waits).
  const rows = servedBy(ctx, bill.rows);
  await retryWhileUnavailable(() => runtime.ledger.settle({ holdId: hold.id, accountId: ctx.auth!.accountId, rows }));
  if (!ctx.started) for (const [name, value] of Object.entries(bill.headers)) ctx.reply.header(name, value);
}

/**
 * Keeps a running stream's hold alive and records on it the usage rows of what was delivered so far
 * (`rows`, or none when nothing new was delivered). False when the hold is closed or unknown.
 */
export function checkpointHold(ctx: RequestContext, runtime: Runtime, rows: UsageRowInput[] | null): Promise<boolean> {
  const delivered = rows ? { accountId: ctx.auth!.accountId, rows: servedBy(ctx, rows).map((r) => ({ ...r, details: { ...r.details, settled_from: 'checkpoint' } })) } : undefined;
  return runtime.ledger.extendHold(ctx.hold!.id, ctx.gateway.settings.holdTtlMs, delivered);
}

/** The accepted job takes the request's hold over (spec 4.16): the request ends without settling or releasing it. */
export function handHoldToJob(ctx: RequestContext): void {
  ctx.hold!.open = false;
}

/** A job's hold, as its record names it: the hold, its account, and when the job's deadline passes. */
export interface JobHold { holdId: string; accountId: string; deadlineAt: Date }

/** Keeps a running job's hold alive until its deadline, plus the gateway's usual margin (`marginMs`). */
export function keepJobHold(ledger: Ledger, job: JobHold, now: Date, marginMs: number): Promise<boolean> {
  return ledger.extendHold(job.holdId, job.deadlineAt.getTime() - now.getTime() + marginMs);
}

/** Charges what a finished job produced against its hold and closes it (a second settle charges nothing). */
export async function settleJobHold(ledger: Ledger, job: JobHold, rows: UsageRowInput[]): Promise<void> {
  await ledger.settle({ holdId: job.holdId, accountId: job.accountId, rows });
}

/** Gives a failed job's hold back: nothing charged (spec 1). */
export function releaseJobHold(ledger: Ledger, job: JobHold): Promise<void> {
  return ledger.release(job.holdId);
}
