/** The translator contract (DESIGN.md "Contracts worth keeping"): one instance per request. */
import type { UsageDialect } from '../config/usage-dialect.js';
import type { ParamPolicy } from '../config/param-policy.js';
import type { CompiledOffering } from '../config/types.js';
import type { GatewayError } from '../errors.js';
import type { SseEvent } from './sse.js';
import type { UploadedFile } from '../bodies/multipart.js';

/**
 * Token usage normalized across formats. `input` counts every prompt token, cached and cache-write
 * tokens included (they are subsets of it); `output` counts every generated token, reasoning included.
 * `toolCalls` counts billable built-in tool calls the upstream reported (e.g. `{web_search: 2}`);
 * each call becomes its own usage row.
 */
export interface TokenUsage {
  input: number; output: number; cachedInput: number; cacheWrite: number; reasoning: number; toolCalls?: Record<string, number>;
  /** Input tokens that are images, a subset of `input` priced at the image-input price (spec 4.14 image edits); absent: none. */
  imageInput?: number;
}

export type { ParamPolicy } from '../config/param-policy.js';

/** Per-request options of a translator, from the route manifest. */
export interface TranslatorOptions {
  params: Readonly<Record<string, ParamPolicy>>;
  /** How the upstream operation reports usage where it differs from its format's norm (issue 32 item 1). */
  usage?: UsageDialect | null;
  /**
   * The offering the request is prepared for (its deployment's), when known: its capabilities are
   * checked before anything is reserved (structured output), and a chained translator
   * (src/translate/chain.ts) builds its middle request with it up front.
   */
  offering?: CompiledOffering;
  /** The gateway's id of the request, for translators that name what they answer after it (a Response's id). */
  requestId?: string;
}

/** What one upstream stream event turned into for the client. */
export interface StreamStep {
  /** Frames to write to the client, already in the client's SSE framing. */
  frames: string[];
  /** Set when the upstream sent an error event; the stream is over. */
  error?: GatewayError;
  /** True when the upstream signalled the normal end of the stream. */
  done?: boolean;
}

/** Per-request stream state machine. */
export interface StreamTranslator {
  push(event: SseEvent): StreamStep;
  /** Usage the upstream reported, or null when it reported none. */
  usage(): TokenUsage | null;
  /** Text delivered to the client so far (content, tool names and arguments), for counting output the upstream did not report. */
  deliveredText(): string;
  /** The length of deliveredText(), without joining it (read on every piece of a stream on a credit grant). */
  deliveredLength(): number;
  /** The frame that ends a broken stream, when the stream's own state shapes it (e.g. a sequence number); else the format's. */
  errorFrame?(error: GatewayError): string;
  /**
   * True when the answer is whole although the upstream's body ended without its terminator (e.g. the
   * usage chunk came and `[DONE]` did not): the stream is finished as a normal one (issue 29, S11).
   */
  whole?(): boolean;
}

/** A translated JSON answer, with what it reports for the meters. */
export interface TranslatedAnswer {
  body: Record<string, unknown>;
  /** Token usage (the token meter's source), or null. */
  usage: TokenUsage | null;
  /** Generated text, for counting output tokens when usage is missing. */
  outputText: string;
  /** Named quantities for `source: { translator: <name> }` meters (e.g. `input_tokens`, `text_records`). */
  quantities?: Record<string, number>;
  /**
   * A plain-text client answer sent instead of `body` as JSON (spec 4.8: a transcription's text, srt
   * or vtt, as the vendor answers them); `body` still describes it for the meters.
   */
  text?: { contentType: string; data: string };
}

/** A translated binary answer (a file), with what it reports for the meters. */
export interface TranslatedFile {
  data: Buffer;
  contentType: string;
  /** The download's file name, for Content-Disposition; null to send it inline. */
  filename: string | null;
  quantities?: Record<string, number>;
  /**
   * Token usage the upstream reported with the file (the token meter's source), e.g. a speech answer
   * read from events whose last one carries it (native-json--openai-speech); absent: none.
   */
  usage?: TokenUsage;
}

/**
 * A binary answer's client file as known from the upstream's status and headers, with the checks of
 * its bytes split so they can run while it streams through (issue 9 point 3): the first bytes before
 * any byte is sent, the last ones once the answer ended and before it is billed. The buffered path
 * runs the same checks on the whole file (src/translate/file-plan.ts).
 */
export interface FilePlan {
  contentType: string;
  /** The download's file name, for Content-Disposition; null to send it inline. */
  filename: string | null;
  quantities?: Record<string, number>;
  /** How many first bytes `checkHead` reads (fewer only when the whole answer is shorter). */
  headBytes: number;
  /** Throws (a 502 GatewayError, nothing billed) when the answer's first bytes are not the file promised. */
  checkHead(head: Buffer): void;
  /** How many last bytes `checkTail` reads; 0 when it has none. */
  tailBytes: number;
  /** Throws (a 502 GatewayError, nothing billed) when the answer's last bytes are not the file promised. */
  checkTail?(tail: Buffer): void;
}

/**
 * An asynchronous upstream job as the gateway records it (routes with `job:`, spec 4.16): the
 * vendor's id, where it stands, and, once it ended, what it produced or why it failed.
 */
export interface JobStatus {
  vendorId: string;
  state: 'queued' | 'in_progress' | 'completed' | 'failed';
  /** Percent done, 0 to 100. */
  progress: number;
  /** Seconds the vendor says the output has (a completed video), when it says. */
  seconds?: number;
  error?: { code: string; message: string };
}

/**
 * An output a finished job named by URL, which the gateway downloaded, sniffed, measured and keeps in
 * temporary private storage (operations whose `poll` declares an `output`; spec 4.14 flex images).
 */
export interface GeneratedOutput {
  /** The gateway's signed read URL, valid until `expiresAt` (spec 8: generated output lifetime). */
  url: string;
  expiresAt: Date;
  /** As sniffed from the bytes (never the vendor's header). */
  contentType: string;
  byteSize: number;
  /** Pixel size read from the image's header. */
  width: number;
  height: number;
  /** The bytes, for answers that inline them (b64_json). */
  data: Buffer;
}

/** Translates one request between a client format and an upstream format. */
export interface Translator {
  /**
   * The upstream request body (a JSON object, an array for vendors that take one, or a FormData for
   * a multipart operation); `files` are the request's file parts (multipart routes, spec 4.8).
   */
  request(clientBody: Record<string, unknown>, offering: CompiledOffering, files?: readonly UploadedFile[]): unknown;
  /**
   * Query parameters the upstream request carries besides the operation's static ones (e.g. a
   * translation's target languages), each name with one or more values.
   */
  query?(clientBody: Record<string, unknown>): Record<string, string[]>;
  /**
   * The client response body, the reported usage, and the generated text (for counting when usage is
   * missing). `headers` are the upstream's (lower-case names), for answers that report there. The
   * body is any JSON object or array (a vendor may answer with an array: read it as `unknown`).
   * `outputs` are the stored outputs of a job whose poll declares `output` (else absent).
   */
  response(upstreamBody: Record<string, unknown>, clientModel: string, headers?: Readonly<Record<string, string>>, outputs?: readonly GeneratedOutput[]): TranslatedAnswer;
  /**
   * The answer to an upstream 200 that is plain text rather than JSON (e.g. a transcription asked for
   * as srt); translators without it treat such an answer as malformed (502, not billed).
   */
  textResponse?(upstreamText: string, clientModel: string, headers: Readonly<Record<string, string>>): TranslatedAnswer;
  stream(clientModel: string): StreamTranslator;
  /** The client's file for a binary upstream answer (operations with `answer: binary`). */
  file?(data: Buffer, headers: Readonly<Record<string, string>>, clientModel: string): TranslatedFile;
  /**
   * The client's file of a binary answer from the upstream's headers alone, for streaming it through;
   * throws (502) when the headers already show a malformed answer. Translators with `file` may have it.
   */
  filePlan?(headers: Readonly<Record<string, string>>, clientModel: string): FilePlan;
  /** The job a job route's answer (or a later status read) describes; required for routes with `job:`. */
  job?(upstreamBody: Record<string, unknown>): JobStatus;
  /** The client-facing error for an upstream error answer. */
  error(status: number, upstreamBody: unknown, headers: Record<string, string>): GatewayError;
}

/**
 * Builds a translator for one request; `clientBody` is the validated client request with the
 * route's parameter policies already applied (rejected ones refused, dropped ones removed,
 * defaults filled). A translator refuses (GatewayError `unsupported_parameter`, with `param`) any
 * remaining parameter it cannot represent upstream: nothing is silently dropped or clamped.
 */
export type TranslatorFactory = (clientBody: Record<string, unknown>, options: TranslatorOptions) => Translator;
