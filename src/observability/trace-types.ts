/**
 * The types of traces (issue 33 item 1) shared by the switch (traces.ts) and the SDK side (otel.ts),
 * and the W3C trace context's header: no SDK here, nothing that loads one.
 */

/** The sampler of OTEL_TRACES_SAMPLER (the SDK's environment specification), with its ratio. */
export interface SamplerSettings {
  name: 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';
  /** OTEL_TRACES_SAMPLER_ARG for the ratio samplers, in [0, 1]; default 1. */
  ratio: number;
}

/** What the exporter and the batch processor run with, from the environment. */
export interface TraceSettings {
  /** The OTLP/HTTP traces URL (`.../v1/traces`). */
  url: string;
  /** OTEL_EXPORTER_OTLP_(TRACES_)HEADERS: `name=value` pairs sent with each export (e.g. a collector's token). */
  headers: Record<string, string>;
  serviceName: string;
  sampler: SamplerSettings;
  /** Longest wait for one export (OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT). */
  exportTimeoutMs: number;
  /** OTEL_BSP_*: the batch span processor's delay, batch size and queue (past it, spans are dropped). */
  batch: { scheduledDelayMs: number; maxExportBatchSize: number; maxQueueSize: number };
}

/** A W3C trace context (Trace Context level 1, `traceparent`): ids in lower-case hex. */
export interface TraceParent { traceId: string; spanId: string; flags: number; }

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * A `traceparent` header, or null when it is not a valid one. W3C Trace Context 3.2: version ff is
 * invalid, all-zero ids are invalid, version 00 has exactly four fields; a later version may carry
 * more after a dash, which is ignored.
 */
export function parseTraceparent(header: string | string[] | undefined): TraceParent | null {
  if (typeof header !== 'string') return null;
  const m = TRACEPARENT.exec(header.trim());
  if (!m) return null;
  const [, version, traceId, spanId, flags, rest] = m;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  if (/^0+$/.test(traceId!) || /^0+$/.test(spanId!)) return null;
  return { traceId: traceId!, spanId: spanId!, flags: parseInt(flags!, 16) };
}

/** The `traceparent` of a span context (version 00). */
export function formatTraceparent(t: TraceParent): string {
  return `00-${t.traceId}-${t.spanId}-${(t.flags & 0xff).toString(16).padStart(2, '0')}`;
}

/** What a request span is opened with. */
export interface RequestStart {
  method: string;
  /** The route's path pattern (`http.route`) and id. */
  path: string;
  route: string;
  requestId: string;
  /** The client's trace context headers, as received. */
  traceparent?: string | string[];
  tracestate?: string | string[];
}

/** What a request span is told when it ends (the GenAI semantic conventions' and the gateway's own attributes). */
export interface RequestFacts {
  status: number;
  /** `gen_ai.operation.name`: chat, embeddings, or the route's id. */
  operation: string;
  /** `gen_ai.system`: the provider that served (null: none was chosen). */
  system: string | null;
  requestModel: string | null;
  responseModel: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  accountId: string | null;
  keyId: string | null;
  deployment: string | null;
  /** What the request was charged, nano-USD (null: nothing). */
  costNano: bigint | null;
  attempts: number;
  /** The error code answered, when the request failed. */
  errorType: string | null;
  /** Read only when content is on (observability.traces.content): the request body and the answer's text. */
  prompt?: () => string | null;
  completion?: () => string | null;
}

/** What an attempt span is opened with. */
export interface AttemptStart { number: number; deployment: string; provider: string; operation: string; model: string; }

/** One upstream attempt's span. */
export interface AttemptSpan {
  /** The trace context headers to send upstream (`traceparent`, and the client's `tracestate`). */
  readonly headers: Readonly<Record<string, string>>;
  /** Ends it with the attempt's outcome (`ok`, a status, or how it failed) and the upstream's status, if one answered. */
  end(outcome: string, upstreamStatus: number | null): void;
}

/** One request's span. */
export interface RequestSpan {
  /** True when prompt and answer text go on the span (observability.traces.content). */
  readonly content: boolean;
  /** Opens the child span of an upstream attempt. */
  attempt(start: AttemptStart): AttemptSpan;
  /** Sets the request's attributes and ends it (once; later calls are ignored). */
  end(facts: RequestFacts): void;
}

/** Traces, when on. */
export interface Tracing {
  /** Where spans go (the OTLP traces URL) and the service they are recorded under, for the start line. */
  readonly endpoint: string;
  readonly serviceName: string;
  /** Opens a request's span (a child of the client's trace context when it sent a valid one). */
  request(start: RequestStart): RequestSpan;
  /** Exports every finished span now (tests; a drain). */
  flush(): Promise<void>;
  /** Exports what is left, at most for the export timeout, and stops. */
  shutdown(): Promise<void>;
}
