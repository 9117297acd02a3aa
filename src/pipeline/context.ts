/** Per-request state: one typed object, a field group per stage (DESIGN.md "Contracts worth keeping"). */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Cancellation } from '../cancel.js';
import type { CompiledGateway, CompiledOffering, CompiledProvider, CompiledRoute, RouteUpstream } from '../config/types.js';
import type { ClientFormat } from '../formats/types.js';
import type { Ticket } from '../limits/types.js';
import type { Caller } from './auth-cache.js';
import type { UploadedFile } from './bodies/multipart.js';
import type { Translator } from '../translate/types.js';

/** What the forward stage observed, for the meter stage to price. */
export interface ForwardOutcome {
  /** `full`: a complete answer; `partial`: content reached the client, then the stream ended abnormally; `none`: nothing billable. */
  delivery: 'full' | 'partial' | 'none';
  /** Usage the translator reported, or null: the meter's to read (src/meters); the pipeline passes it through. */
  reported: unknown;
  /** Text delivered to the client, for a meter to count when nothing was reported. */
  deliveredText: string;
  /** A JSON or binary answer's parts, for the meters that read them (absent on streams). */
  answer?: UpstreamAnswer | null;
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

/** A temporary file (spec 4.7) a request named, now inline in the body: for translators that need its type. */
export interface InputFile {
  /** The body field that holds its bytes (base64). */
  field: string;
  fileId: string;
  /** The MIME type verified at finalize. */
  contentType: string;
}

/** The state of one request through the pipeline. */
export interface RequestContext {
  readonly requestId: string;
  readonly gateway: CompiledGateway;
  readonly route: CompiledRoute;
  readonly format: ClientFormat;
  readonly req: FastifyRequest;
  readonly reply: FastifyReply;
  readonly params: Record<string, string>;
  /** Aborted when the client goes away; forwards abort the upstream with it. */
  readonly clientGone: Cancellation;
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
  /** The operation chosen for the model, and its wire format. */
  upstream: { choice: RouteUpstream; format: string } | null;
  /** The translator is created by route (its refusals are 400s before any reservation); translate builds the body. */
  translation: { translator: Translator; upstreamBody: unknown; upstreamQuery: Record<string, string[]> | null } | null;
  /** `settled`: the meter charged it (false when it was released, or handed to a job). */
  hold: { id: string; amountNano: bigint; inputEstimate: number; open: boolean; settled?: boolean } | null;
  outcome: ForwardOutcome | null;
  /** True once any byte of the answer was written to the client. */
  started: boolean;
  /** The request's claimed X-Gateway-Operation-ID (images and video; claimed by admission, src/pipeline/operation-ids.ts). */
  operationId?: string;
  /** What a completed operation is replayed from (e.g. the video job it started), when not its billed answer. */
  operationResult?: Record<string, unknown>;
  /** Set when a stage answered the request itself (a replayed operation): the stages after it are skipped. */
  answered?: boolean;
  /** Run after billing and before the answer is written (e.g. publishing a skills execution's outputs). */
  beforeAnswer: Array<() => Promise<void>>;
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
