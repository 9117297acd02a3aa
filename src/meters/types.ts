/**
 * The meter contract (issue 9, "Meters are data"; DESIGN.md "Money and metering"). A route declares,
 * per billing unit, how it is metered; the offering's unit picks one meter per request. The
 * pipeline only ever talks to this interface: admission asks for a demand and a quote, the meter
 * stage for a bill. Tokens are one implementation (token-meter.ts), quantities of any other unit the
 * other (quantity-meter.ts). Money stays exact: a hold is rounded up once, each usage row once.
 * Meters take their own input types (MeterContext, MeterOutcome): the pipeline's request context
 * satisfies them as it is, and nothing here imports the pipeline.
 */
import type { UploadedFile } from '../bodies/multipart.js';
import type { CompiledGateway, CompiledOffering, CompiledProvider, CompiledRoute } from '../config/types.js';
import type { UsageRowInput } from '../ledger/types.js';
import type { LimiterDemand } from '../limits/types.js';
import type { GatewayMetrics } from '../observability/metrics.js';

/**
 * What a meter reads of a request: exactly these fields of the pipeline's request context
 * (src/pipeline/context.ts), which is passed as it is.
 */
export interface MeterContext {
  /** The usage rows' request id. */
  readonly requestId: string;
  /** The configuration the request runs under (the token meter reads its input margin). */
  readonly gateway: Pick<CompiledGateway, 'settings'>;
  /** The request's route: whether it is billable, and the meters compiled for it. */
  readonly route: CompiledRoute;
  /** The client's own body, before the route's parameter defaults (did the client set the output cap?). */
  readonly req: { readonly body: unknown };
  /** The request body the meters count, with the route's parameter defaults applied. */
  readonly body: Record<string, unknown>;
  /** The request's file parts, with what their probes measured (`files:/<part>`). */
  readonly files: readonly UploadedFile[];
  /** Inputs a route's `url_inputs` measured, by body field (`files:/<field>`). */
  readonly inputFacts?: Readonly<Record<string, Readonly<Record<string, number>>>>;
  /** The caller: its key id goes on the usage rows (null: no key). */
  readonly auth: { readonly keyId: string } | null;
  /** The offering the request is billed at and the provider that serves it; null before a model is chosen. */
  readonly model: { readonly offering: CompiledOffering; readonly provider: CompiledProvider } | null;
}

/** What a quantity meter may read of an answer (src/meters/sources.ts). */
export interface UpstreamAnswer {
  upstreamBody: unknown;
  /** Upstream response headers, lower-case names. */
  headers: Readonly<Record<string, string>>;
  /** The client answer the translator built. */
  clientBody: unknown;
  /** Quantities the translator reported by name (e.g. per-document counts). */
  quantities: Readonly<Record<string, number>>;
}

/** What the forward observed of an answer, for a meter to price (the pipeline's ForwardOutcome). */
export interface MeterOutcome {
  /** `full`: a complete answer; `partial`: content reached the client, then the stream ended abnormally; `none`: nothing billable. */
  delivery: 'full' | 'partial' | 'none';
  /** Usage the translator reported, or null: the meter's to read; the pipeline passes it through. */
  reported: unknown;
  /** Text delivered to the client, for a meter to count when nothing was reported. */
  deliveredText: string;
  /** A JSON or binary answer's parts, for the meters that read them (absent on streams). */
  answer?: UpstreamAnswer | null;
}

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
  /**
   * What a stream owes at most before its first content (its input and tools) and per character it
   * delivers (three output tokens: a token is at least one byte, a character at most three), for the
   * bound on what a crash may leave unbilled (issue 30). Absent: the whole quote until a checkpoint.
   */
  streamCeiling?: { startNano: bigint; perCharNano: bigint };
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
  check(ctx: MeterContext, offering?: CompiledOffering): void;
  demand(ctx: MeterContext): Demand;
  /**
   * The hold for the request; `demand` is the one just computed, so nothing is counted twice.
   * `offering` defaults to the request's: the hold covers the dearest offering it may reach (issue 29 item 4).
   */
  quote(ctx: MeterContext, demand: Demand, offering?: CompiledOffering): Quote;
  /** The charge for an outcome, or null when nothing is billable. `partial`: a stream checkpoint. */
  bill(ctx: MeterContext, outcome: MeterOutcome, inputEstimate: number): Bill | null;
}
