/**
 * The meter contract (issue 9, "Meters are data"; DESIGN.md "Money and metering"). A route declares,
 * per billing unit, how it is metered; the offering's unit picks one meter per request. The
 * pipeline only ever talks to this interface: admission asks for a demand and a quote, the meter
 * stage for a bill. Tokens are one implementation (token-meter.ts), quantities of any other unit the
 * other (quantity-meter.ts). Money stays exact: a hold is rounded up once, each usage row once.
 */
import type { CompiledOffering } from '../config/types.js';
import type { UsageRowInput } from '../ledger/types.js';
import type { LimiterDemand } from '../limits/types.js';
import type { ForwardOutcome, RequestContext } from '../pipeline/context.js';
import type { GatewayMetrics } from '../observability/metrics.js';

/**
 * A meter's demand: what the request counts against the rate limiter (src/limits/types.ts, whose type
 * it is); 0 for meters the limiter does not count. A meter may carry more of its own in its demand
 * (e.g. the token meter's input estimate) for its `quote`.
 */
export type Demand = LimiterDemand;

/** Where a bill reports what was metered (the gateway's metrics; absent in unit tests). */
export type MeterMetrics = Pick<GatewayMetrics, 'metered'>;

/** A priced reservation. */
export interface Quote {
  amountNano: bigint;
  /** The input-token estimate the token meter bills a partial answer with (0 for other meters). */
  inputEstimate: number;
  /** The 402's message and parameter, given what the account has (spec 7; issue 8 item 6). */
  refusal(account: { balanceNano: bigint; creditLimitNano: bigint }): { message: string; param: string | null };
}

/** What one request is charged. */
export interface Bill {
  rows: UsageRowInput[];
  /** What to correct the rate limiter's demand to, in its units (0 for meters it does not count). */
  limiterUnits: number;
  /** Reports the bill to the metrics: each meter its own quantities, and the charge. */
  observe(metrics: MeterMetrics): void;
  /** Response headers carrying the settled quantity and charge (set before the answer is written). */
  headers: Record<string, string>;
}

/** One meter of a route, for one billing unit. */
export interface Meter {
  readonly unit: string;
  /**
   * True when the settled quantity is known once the upstream's status and headers are in (every
   * source reads the request, a constant, a local counter over the request or its files, or an upstream
   * response header): a binary answer is then streamed through, its bill and cost headers computed
   * before its body (issue 9 point 3). Absent: known only from the whole answer.
   */
  readonly knownAtHeaders?: boolean;
  /**
   * Refuses, before anything is reserved, a request the offering cannot serve under this meter (400);
   * `offering` defaults to the request's (a fallback's is checked before it is reached, issue 29 item 4).
   */
  check(ctx: RequestContext, offering?: CompiledOffering): void;
  demand(ctx: RequestContext): Demand;
  /**
   * The hold for the request; `demand` is the one just computed, so nothing is counted twice.
   * `offering` defaults to the request's: the hold covers the dearest offering it may reach (issue 29 item 4).
   */
  quote(ctx: RequestContext, demand: Demand, offering?: CompiledOffering): Quote;
  /** The charge for an outcome, or null when nothing is billable. `partial`: a stream checkpoint. */
  bill(ctx: RequestContext, outcome: ForwardOutcome, inputEstimate: number): Bill | null;
}
