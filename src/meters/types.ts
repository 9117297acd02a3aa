/**
 * The meter contract (issue 9, "Meters are data"; DESIGN.md "Money and metering"). A route declares,
 * per billing unit, how it is metered; the offering's unit picks one meter per request. The
 * pipeline only ever talks to this interface: admission asks for a demand and a quote, the meter
 * stage for a bill. Tokens are one implementation (token-meter.ts), quantities of any other unit the
 * other (quantity-meter.ts). Money stays exact: a hold is rounded up once, each usage row once.
 */
import type { UsageRowInput } from '../ledger/types.js';
import type { ForwardOutcome, RequestContext } from '../pipeline/context.js';
import type { TokenUsage } from '../translate/types.js';

/** What the request counts against the rate limiter's token limit (0 for meters that are not tokens). */
export interface Demand { tokens: number; inputTokens: number; }

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
  /** Tokens to correct the rate limiter's estimate to (0 for meters that are not tokens). */
  limiterTokens: number;
  /** Token usage, for the token metrics; null for other meters. */
  tokens: TokenUsage | null;
  /** Response headers carrying the settled quantity and charge (set before the answer is written). */
  headers: Record<string, string>;
}

/** One meter of a route, for one billing unit. */
export interface Meter {
  readonly unit: string;
  /** Refuses, before anything is reserved, a request the offering cannot serve under this meter (400). */
  check(ctx: RequestContext): void;
  demand(ctx: RequestContext): Demand;
  /** The hold for the request; `demand` is the one just computed, so nothing is counted twice. */
  quote(ctx: RequestContext, demand: Demand): Quote;
  /** The charge for an outcome, or null when nothing is billable. `partial`: a stream checkpoint. */
  bill(ctx: RequestContext, outcome: ForwardOutcome, inputEstimate: number): Bill | null;
}
