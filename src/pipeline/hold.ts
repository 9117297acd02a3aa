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
 * A request on a key with a budget (issue 33 item 2) always takes the strict path, and its reserve is
 * guarded by the key's budget window in the same transaction (migration 016): 402 key_budget_exceeded,
 * the account untouched, when the window cannot cover the quote.
 */
import { systemClock } from '../clock.js';
import { DependencyUnavailableError, GatewayError } from '../errors.js';
import { formatUsd } from '../money.js';
import type { Ledger } from '../ledger/ledger.js';
import { GrantLapsedError, type Draw } from '../ledger/grants/index.js';
import { storedRows } from '../ledger/holds.js';
import type { UsageRow, UsageRowInput } from '../ledger/types.js';
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

/** Whether the request's key has a budget: its requests are reserved on the key (never on a grant). */
function keyBudgeted(ctx: RequestContext): boolean {
  return ctx.auth?.controls?.budgetNano !== undefined && ctx.auth.controls.budgetNano !== null;
}

/** The 402 for a key whose budget window cannot cover the quote: what is left of it, and what the request may cost. */
async function keyBudgetExceeded(ctx: RequestContext, runtime: Runtime, quote: Quote): Promise<GatewayError> {
  const key = await runtime.ledger.getKey(ctx.auth!.keyId, (runtime.clock ?? systemClock).now()).catch(() => null);
  const budget = key?.controls.budgetNano;
  if (!key?.usage || budget === null || budget === undefined) return new GatewayError('key_budget_exceeded', "This API key's budget cannot cover the maximum cost of this request.");
  const left = budget - key.usage.spentNano - key.usage.heldNano;
  const period = key.controls.budgetPeriod === 'total' ? 'in total' : `per ${key.controls.budgetPeriod}`;
  return new GatewayError('key_budget_exceeded', `This API key's budget of $${formatUsd(budget)} ${period} has $${formatUsd(left > 0n ? left : 0n)} left; this request may cost up to $${formatUsd(quote.amountNano)}.`);
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
 * Admits the request against its account's credit grant (issue 30), in memory; false when it takes
 * the strict path (a job route, no grant, no headroom, a quote above `max_draw_usd`, ...).
 */
function admitOnGrant(ctx: RequestContext, runtime: Runtime, quote: Quote, amountNano: bigint, job: boolean): boolean {
  const grants = runtime.grants;
  if (!grants) return false;
  const accountId = ctx.auth!.accountId;
  const draw = job ? 'job' : grants.book.admit(accountId, ctx.requestId, amountNano);
  if (typeof draw === 'string') {
    grants.strict(draw, accountId, amountNano);
    return false;
  }
  ctx.hold = { id: ctx.requestId, amountNano, inputEstimate: quote.inputEstimate, open: true, draw, ceiling: quote.streamCeiling ?? null };
  return true;
}

/** What one strict reserve came to. */
type Reserved = 'reserved' | 'insufficient_balance' | 'key_budget_exceeded';

/** One guarded reserve: on the balance (group-committed), or on the key and the balance when the key has a budget. */
async function reserveOnce(ctx: RequestContext, runtime: Runtime, amountNano: bigint, ttlMs: number): Promise<Reserved> {
  const input = { holdId: ctx.requestId, accountId: ctx.auth!.accountId, amountNano, ttlMs };
  if (!keyBudgeted(ctx)) return (await runtime.ledger.reserve(input)) ? 'reserved' : 'insufficient_balance';
  const status = await runtime.ledger.reserveOnKey({ ...input, keyId: ctx.auth!.keyId, now: (runtime.clock ?? systemClock).now() });
  // A hold of this id already exists: not reserved again, as the balance's reserve answers it.
  return status === 'exists' ? 'insufficient_balance' : status;
}

/** The strict path: one guarded reserve per amount tried, largest first; what the last one came to. */
async function reserveStrict(ctx: RequestContext, runtime: Runtime, quote: Quote, amounts: bigint[], ttlMs: number): Promise<Reserved> {
  let outcome: Reserved = 'insufficient_balance';
  for (const amountNano of amounts) {
    try {
      outcome = await reserveOnce(ctx, runtime, amountNano, ttlMs);
    } catch (error) {
      // The store went away: the reserve may have committed before its answer was lost, so the hold
      // is given back like any failed request's (a release of a hold that does not exist is a no-op).
      if (error instanceof DependencyUnavailableError) ctx.hold = { id: ctx.requestId, amountNano, inputEstimate: quote.inputEstimate, open: true };
      throw error;
    }
    if (outcome === 'reserved') {
      ctx.hold = { id: ctx.requestId, amountNano, inputEstimate: quote.inputEstimate, open: true };
      return outcome;
    }
  }
  return outcome;
}

/**
 * Reserves the meter's quote for the request, or throws the 402; no upstream call without a hold. A
 * stream that may be rescued first asks for its rescue reserve too; an account that cannot hold both
 * is held for the quote alone (its stream then ends with an error if cut, never a spurious 402).
 * The quote is admitted against the account's credit grant when it fits (issue 30), else reserved
 * on its own; before a 402, grants are reclaimed (this replica's and the others') and it is tried once more.
 */
export async function reserveHold(ctx: RequestContext, runtime: Runtime, meter: Meter, demand: Demand): Promise<void> {
  const settings = ctx.gateway.settings;
  const quote = dearestQuote(ctx, meter, demand);
  const extra = rescueReserve(ctx, quote);
  const amounts = extra > 0n ? [quote.amountNano + extra, quote.amountNano] : [quote.amountNano];
  // A job's hold lives as long as the job may run (spec 4.16): the poller extends it, and a crash
  // longer than the usual margin must not let the sweeper give back what a finishing job will bill.
  const job = jobKindOf(ctx.route);
  // A grant admits in memory, per account: a key with a budget never draws on one.
  if (!keyBudgeted(ctx) && admitOnGrant(ctx, runtime, quote, amounts[0]!, job !== null)) return;
  const ttlMs = job ? job.deadlineMs(settings) + settings.holdTtlMs : settings.holdTtlMs;
  let outcome = await reserveStrict(ctx, runtime, quote, amounts, ttlMs);
  if (outcome === 'reserved') return;
  if (outcome === 'insufficient_balance' && runtime.grants) {
    await runtime.grants.reclaim(ctx.auth!.accountId);
    outcome = await reserveStrict(ctx, runtime, quote, amounts, ttlMs);
    runtime.grants.reclaimed(outcome === 'reserved');
    if (outcome === 'reserved') return;
  }
  if (outcome === 'key_budget_exceeded') {
    // key.budget_reached (issue 33 item 3), once per period: written behind the answer.
    runtime.alerts?.keyBudgetRefused(ctx.auth!.keyId).catch(() => undefined);
    throw await keyBudgetExceeded(ctx, runtime, quote);
  }
  throw await insufficientBalance(ctx, runtime, quote);
}

/** Gives the hold back, if still open: nothing charged. During a store outage it waits in the ledger's backlog. */
export async function releaseHold(ctx: RequestContext, runtime: Runtime): Promise<void> {
  if (!ctx.hold?.open) return;
  ctx.hold.open = false;
  // A draw on a grant was only ever held in memory: nothing to write.
  if (ctx.hold.draw) runtime.grants!.book.release(ctx.hold.draw);
  else await runtime.ledger.releaseOrDefer(ctx.hold.id);
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
  const rows = servedBy(ctx, bill.rows);
  if (hold.draw) await postOnGrant(runtime, hold.draw, storedRows(ctx.auth!.accountId, rows));
  // Settling twice charges once, so a settle is retried through a store outage (the answer waits).
  else await retryWhileUnavailable(() => runtime.ledger.settle({ holdId: hold.id, accountId: ctx.auth!.accountId, rows }));
  // Charged: what the answer says it cost (issue 31 item 12) is the sum of the rows just written.
  ctx.chargedNano = rows.reduce((sum, r) => sum + r.amountNano, 0n);
  if (!ctx.started) for (const [name, value] of Object.entries(bill.headers)) ctx.reply.header(name, value);
}

/**
 * Queues a grant-admitted request's charge for the flusher (issue 30); the answer waits only when
 * its post must come first (post: immediate, or over `max_unposted_usd`). A post the store refused
 * (the grant lapsed in an outage and the balance no longer covers it) fails the request, uncharged.
 */
async function postOnGrant(runtime: Runtime, draw: Draw, rows: UsageRow[]): Promise<void> {
  const waiting = runtime.grants!.book.finish(draw, rows);
  if (!waiting) return;
  try {
    await waiting;
  } catch (error) {
    if (error instanceof GrantLapsedError) throw new GatewayError('store_unavailable', 'The billing store was unreachable for longer than this request could wait; it was not charged.');
    throw error;
  }
}

/**
 * Keeps a running stream's hold alive and records on it the usage rows of what was delivered so far
 * (`rows`, or none when nothing new was delivered). False when the hold is closed or unknown.
 */
export function checkpointHold(ctx: RequestContext, runtime: Runtime, rows: UsageRowInput[] | null): Promise<boolean> {
  const delivered = rows ? { accountId: ctx.auth!.accountId, rows: checkpointRows(ctx, rows) } : undefined;
  return runtime.ledger.extendHold(ctx.hold!.id, ctx.gateway.settings.holdTtlMs, delivered);
}

/**
 * A running stream admitted on a grant (issue 30): the flusher records what it delivered on the grant
 * (`deliveredRows`, a checkpoint's rows), and each piece it writes reports its delivered length (the
 * hold's `gate`), waiting when the account's unrecorded content is over `max_unposted_usd`.
 */
export function trackOnGrant(ctx: RequestContext, runtime: Runtime, deliveredRows: () => UsageRowInput[] | null, deliveredLength: () => number): void {
  const hold = ctx.hold!;
  const draw = hold.draw!;
  const book = runtime.grants!.book;
  const ceiling = hold.ceiling ?? { startNano: hold.amountNano, perCharNano: 0n };
  book.track(draw, {
    snapshot: () => {
      const rows = deliveredRows();
      return rows ? storedRows(ctx.auth!.accountId, checkpointRows(ctx, rows)) : null;
    },
    rows: [], startRecorded: false, chars: deliveredLength(), recordedChars: 0, snapshotAt: book.now(), ...ceiling,
  });
  hold.gate = (chars) => (draw.done ? null : book.delivered(draw, chars));
}

/** A checkpoint's rows: served by the request's deployment, marked as settled from a checkpoint. */
function checkpointRows(ctx: RequestContext, rows: UsageRowInput[]): UsageRowInput[] {
  return servedBy(ctx, rows).map((r) => ({ ...r, details: { ...r.details, settled_from: 'checkpoint' } }));
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
