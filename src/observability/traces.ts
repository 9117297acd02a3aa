/**
 * OpenTelemetry traces (issue 33 item 1): the switch, the settings read from the standard OTEL_*
 * variables, the W3C trace context, and the span interfaces the pipeline uses.
 *
 * Off unless OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is set: then
 * startTracing resolves to null, nothing of the SDK is loaded (this file imports only its types, and
 * ./otel.js, the SDK's side, is imported dynamically), and the request path makes one null check.
 * On, each request is a span continuing the client's `traceparent`, each upstream attempt a child
 * span whose context goes to the upstream; spans are batched and exported over OTLP/HTTP (JSON)
 * behind the requests, never in their way (otel.ts).
 *
 * Nothing here imports the pipeline (test/codegen/import-direction.test.ts): the pipeline gives a
 * span its facts as plain values (src/pipeline/trace.ts).
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

type Env = Readonly<Record<string, string | undefined>>;

const SAMPLERS: ReadonlySet<string> = new Set<SamplerSettings['name']>(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio']);

/** The service name when OTEL_SERVICE_NAME is unset. */
export const DEFAULT_SERVICE_NAME = 'ai-gateway';

function positive(env: Env, name: string, fallback: number): number {
  const value = Number(env[name]?.trim() || NaN);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

/** `a=b,c=d` as OTEL_EXPORTER_OTLP_HEADERS writes them (values URL-encoded). */
export function parseOtlpHeaders(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    const name = pair.slice(0, at).trim();
    const raw = pair.slice(at + 1).trim();
    let value = raw;
    try { value = decodeURIComponent(raw); } catch { /* kept as written */ }
    if (name) out[name] = value;
  }
  return out;
}

/** The sampler the environment names; an unknown name falls back to the specification's default. */
export function samplerFromEnv(env: Env): SamplerSettings {
  const raw = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || 'parentbased_always_on';
  const name = (SAMPLERS.has(raw) ? raw : 'parentbased_always_on') as SamplerSettings['name'];
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG?.trim() || NaN);
  return { name, ratio: Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1 };
}

/**
 * The trace settings, or null when traces are off: no endpoint variable, OTEL_SDK_DISABLED=true, or
 * OTEL_TRACES_EXPORTER=none (the specification's switches). A traces endpoint is used as given; the
 * general endpoint gets `/v1/traces` appended (OTLP/HTTP's rule for signal paths).
 */
export function traceSettingsFromEnv(env: Env): TraceSettings | null {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (!traces && !base) return null;
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return null;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return null;
  const url = traces || `${base!.replace(/\/+$/, '')}/v1/traces`;
  const timeout = positive(env, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', positive(env, 'OTEL_EXPORTER_OTLP_TIMEOUT', 10_000));
  const maxQueueSize = positive(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048);
  return {
    url,
    headers: { ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), ...parseOtlpHeaders(env.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
    serviceName: env.OTEL_SERVICE_NAME?.trim() || DEFAULT_SERVICE_NAME,
    sampler: samplerFromEnv(env),
    exportTimeoutMs: timeout,
    batch: {
      scheduledDelayMs: positive(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000),
      maxExportBatchSize: Math.min(maxQueueSize, positive(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512)),
      maxQueueSize,
    },
  };
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
  /** Opens a request's span (a child of the client's trace context when it sent a valid one). */
  request(start: RequestStart): RequestSpan;
  /** Exports every finished span now (tests; a drain). */
  flush(): Promise<void>;
  /** Exports what is left, at most for the export timeout, and stops. */
  shutdown(): Promise<void>;
}

let loads = 0;

/** How many times the SDK side was loaded in this process (tests check that it never is when traces are off). */
export function tracingLoads(): number {
  return loads;
}

/**
 * Traces as the environment configures them, or null when they are off (then nothing is loaded).
 * `content` is read per request: a configuration reload changes it.
 */
export async function startTracing(env: Env, content: () => boolean): Promise<Tracing | null> {
  const settings = traceSettingsFromEnv(env);
  if (!settings) return null;
  loads += 1;
  const { createTracing } = await import('./otel.js');
  return createTracing(settings, content);
}
