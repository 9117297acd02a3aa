/** Per-request state: one typed object, a field group per stage (DESIGN.md "Contracts worth keeping"). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Cancellation } from '../cancel.js';
import type { CompiledDeployment, CompiledGateway, CompiledOffering, CompiledProvider, CompiledRoute, RouteUpstream } from '../config/types.js';
import type { GatewayError } from '../errors.js';
import type { UsageRowInput } from '../ledger/types.js';
import type { MeterOutcome } from '../meters/types.js';
import type { GatewayMetrics } from '../observability/metrics.js';
import type { AttemptSpan, RequestSpan } from '../observability/traces.js';
import type { FailureKind } from '../upstream/attempt-error.js';
import type { PoolKey } from '../upstream/key-pool.js';
import type { ClientFormat } from '../formats/types.js';
import type { Ticket } from '../limits/types.js';
import type { Caller } from './auth-cache.js';
import type { UploadedFile } from '../bodies/multipart.js';
import type { Translator } from '../translate/types.js';
import type { Draw } from '../ledger/grants/index.js';
import type { Quote } from '../meters/types.js';

/** What the forward stage observed, for the meter stage to price: the meters' own outcome type. */
export type ForwardOutcome = MeterOutcome;

/** A temporary file (spec 4.7) a request named, now inline in the body: for translators that need its type. */
export interface InputFile {
  /** The body field that holds its bytes (base64). */
  field: string;
  fileId: string;
  /** The MIME type verified at finalize. */
  contentType: string;
}

/** One upstream attempt, as the access log, the headers and the trace report it (issue 29 item 7). */
export interface AttemptRecord {
  deployment: string;
  provider: string;
  /** `ok`, the upstream's status, or how it failed (connect, headers_timeout, ...). */
  outcome: string;
  ms: number;
}

/** What the forward of one attempt is given (issue 29 items 2, 3): its key, its signal and its limits. */
export interface AttemptOptions {
  key: PoolKey | null;
  /** Aborted when the client leaves or the attempt's own timer fires. */
  signal: Cancellation;
  /** At most this long for the answer's headers (the request's deadline). */
  headersTimeoutMs: number;
  /** The longest silence between a stream's pieces. */
  idleTimeoutMs: number;
  /** performance.now() at the attempt's start, and at its answer's headers. */
  startedAt: number;
  answeredAt: number | null;
  /** Set when the attempt's own timer (first content, stream idle) ended it. */
  timedOut: FailureKind | null;
  /** True once a stream's first content event arrived (its frames then flow to the client). */
  contentStarted: boolean;
  /** The attempt's trace span, when traces are on (issue 33 item 1): its context goes upstream. */
  trace?: AttemptSpan | null;
}

/** What a rescued stream owes for the content delivered before its cut (src/pipeline/rescue.ts). */
export interface CarriedBill {
  rows: UsageRowInput[];
  limiterUnits: number;
  observers: Array<(metrics: Pick<GatewayMetrics, 'metered'>) => void>;
}

/** What the attempt loop may reach (src/pipeline/plan.ts): the requested offering and its fallbacks. */
export interface ServingPlan {
  /** The requested offering first, then the others in the order they are tried. */
  chain: CompiledOffering[];
  contextFallbacks: CompiledOffering[];
  contentFallbacks: CompiledOffering[];
}

/** The attempt loop's state (issue 29; src/pipeline/attempts.ts). */
export interface RoutingState {
  /** The client's body before any operation's parameter policies: each deployment applies its own. */
  clientBody: Record<string, unknown>;
  /** The offerings that may serve, in order (the requested one first), and those tried on a context-length or content-policy refusal. */
  plan: ServingPlan;
  /** The deployment ctx.model, ctx.upstream and ctx.translation are prepared for. */
  deployment: CompiledDeployment;
  attempts: AttemptRecord[];
  /** performance.now() when the request was routed: the deadline counts from here. */
  startedAt: number;
  /** The attempt in progress. */
  current: AttemptOptions | null;
  /**
   * Sent once: a request whose effects at the vendor are not idempotent and whose failed outcome may
   * be uncertain (a skills execution, spec 4.6) is never retried, it is recovered as the spec says.
   */
  once: boolean;
  /** Set when a stream was cut after content (item 6): its error, the text delivered, and the frame that ends the client's stream. */
  cut: { error: GatewayError; delivered: string; tail: string } | null;
  /** A continuation in progress: the bill of what came before, the first cut's closing frame, and the text the client has. */
  rescue: { carried: CarriedBill; tail: string; prefix: string } | null;
}

/** The state of one request through the pipeline; the meters read it as a MeterContext (src/meters/types.ts). */
export interface RequestContext {
  readonly requestId: string;
  readonly gateway: CompiledGateway;
  readonly route: CompiledRoute;
  readonly format: ClientFormat;
  readonly req: FastifyRequest;
  readonly reply: FastifyReply;
  readonly params: Record<string, string>;
  /** Aborted when the client goes away. */
  readonly clientGone: Cancellation;
  /**
   * Aborted when the request's upstream work should stop: `clientGone` itself, unless the request
   * outlives its client (a claimed X-Gateway-Operation-ID: the operation finishes, is billed and kept
   * for the id's retry; issue 31 item 9). Attempts, polls and the meter's "left before the answer" read it.
   */
  work: Cancellation;
  auth: Caller | null;
  /** What the limiter took; given back (and corrected to the bill's limiter units) when the request ends. */
  limit: { ticket: Ticket; billedUnits: number } | null;
  body: Record<string, unknown>;
  /** The files of a multipart request (its text fields are `body`); empty otherwise. */
  files: UploadedFile[];
  /** Temporary files the route's `file_inputs` put into the body, by the field that now holds them (src/pipeline/file-inputs.ts). */
  inputFiles?: InputFile[];
  /** Inputs a route's `url_inputs` measured (`probe`), by body field: meters read them as `files:/<field>`. */
  inputFacts?: Record<string, Readonly<Record<string, number>>>;
  /** Operation features the request uses (file references, skills): their upstream headers are sent. */
  features: string[];
  stream: boolean;
  model: { offering: CompiledOffering; provider: CompiledProvider } | null;
  /** Deployments, fallbacks and attempts (issue 29); null on routes the gateway answers itself. */
  routing: RoutingState | null;
  /**
   * The provider holding state the request refers to (issue 29 item 8: a messages-format file, a
   * skills container, a native previous response, a video job): only its deployments may serve it.
   */
  pinnedProvider?: string;
  /** The operation chosen for the model, and its wire format. */
  upstream: { choice: RouteUpstream; format: string } | null;
  /** The translator is created by route (its refusals are 400s before any reservation); translate builds the body. */
  translation: { translator: Translator; upstreamBody: unknown; upstreamQuery: Record<string, string[]> | null } | null;
  /**
   * `settled`: the meter charged it (false when it was released, or handed to a job). `draw`: admitted
   * against the account's credit grant in memory (issue 30), not reserved in the store; `ceiling`
   * prices what its stream delivers, for the bound on unrecorded content, and `gate` is told each
   * written piece's delivered length (a promise to wait for when that bound is reached).
   */
  hold: { id: string; amountNano: bigint; inputEstimate: number; open: boolean; settled?: boolean; draw?: Draw; ceiling?: Quote['streamCeiling'] | null; gate?: (deliveredChars: number) => Promise<void> | null } | null;
  outcome: ForwardOutcome | null;
  /**
   * What the meter settled the request for (every usage row it wrote, nano-USD), once it did; absent
   * when nothing was charged. The answer says it (`usage.cost`, X-Gateway-Cost-USD; issue 31 item 12).
   */
  chargedNano?: bigint;
  /** True once any byte of the answer was written to the client. */
  started: boolean;
  /** The request's trace span; null when traces are off (issue 33 item 1, src/pipeline/trace.ts). */
  trace: RequestSpan | null;
  /** The request's claimed X-Gateway-Operation-ID (images and video; claimed by admission, src/pipeline/operation-ids.ts). */
  operationId?: string;
  /** What a completed operation is replayed from (e.g. the video job it started), when not its billed answer. */
  operationResult?: Record<string, unknown>;
  /** Set when a stage answered the request itself (a replayed operation): the stages after it are skipped. */
  answered?: boolean;
  /** Run after billing and before the answer is written (e.g. publishing a skills execution's outputs). */
  beforeAnswer: Array<() => Promise<void>>;
  /** Sees every frame a stream writes to the client, in order (a stored response's final Response, src/pipeline/response-store.ts). */
  streamTap?: (frames: readonly string[]) => void;
  /** Run when the request fails, before the error is answered; each may replace the error answered. */
  onFailure: Array<(error: unknown) => Promise<unknown>>;
  /** The upstream's answer status, once one arrived (null: none, the outcome is unknown if it was sent). */
  upstreamStatus: number | null;
  /**
   * The last write of the answer (the JSON body, or a stream's closing frame), held back by forward
   * and run by the pipeline after the meter stage: an answer completes only once it is billed.
   */
  finish: (() => Promise<void> | void) | null;
}

/** A compiled stage handler; absent stages compile to null and cost nothing per request. */
export type StageHandler = (ctx: RequestContext) => Promise<void> | void;
