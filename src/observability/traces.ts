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

import type { SamplerSettings, TraceSettings, Tracing } from './trace-types.js';

export { formatTraceparent, parseTraceparent } from './trace-types.js';
export type { AttemptSpan, AttemptStart, RequestFacts, RequestSpan, RequestStart, SamplerSettings, TraceParent, TraceSettings, Tracing } from './trace-types.js';

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
