/**
 * Every environment variable the gateway's own code reads, with what it does: the one list that
 * compose.yaml, the README and test/config/environment.test.ts (which scans src/ for reads and
 * fails on one missing here) are checked against. Provider credentials and base URLs are not here:
 * they are data, the `env:NAME` locations of providers/*.yaml (providerVariables lists them).
 */
import type { RawGateway } from './load.js';

/** Which process reads a variable. */
export type EnvReader = 'gateway' | 'cli' | 'simulator';

/** One variable. */
export interface EnvVariable { name: string; reader: EnvReader; effect: string }

/** The variables, grouped as the README's Configuration section lists them. */
export const ENVIRONMENT: readonly EnvVariable[] = [
  { name: 'PORT', reader: 'gateway', effect: 'listen port (default 8080)' },
  { name: 'GATEWAY_HOST', reader: 'gateway', effect: 'listen address (default 127.0.0.1; 0.0.0.0 in a container)' },
  { name: 'GATEWAY_CONFIG', reader: 'gateway', effect: 'path of gateway.config.yaml' },
  { name: 'GATEWAY_WATCH', reader: 'gateway', effect: '1: reload the manifests on change' },
  { name: 'DATABASE_URL', reader: 'gateway', effect: 'PostgreSQL instead of the embedded PGlite store' },
  { name: 'GATEWAY_DATA_DIR', reader: 'gateway', effect: 'PGlite data folder (and local blobs)' },
  { name: 'GATEWAY_ADMIN_TOKEN', reader: 'gateway', effect: 'enables the admin API (Bearer this token); also the CLI\'s token' },
  { name: 'GATEWAY_METRICS_TOKEN', reader: 'gateway', effect: 'protects GET /metrics' },
  { name: 'GATEWAY_LOG_LEVEL', reader: 'gateway', effect: 'log level, or silent' },
  { name: 'GATEWAY_DRAIN_SECONDS', reader: 'gateway', effect: 'how long SIGTERM waits for requests in flight' },
  { name: 'GATEWAY_HOLD_TTL_SECONDS', reader: 'gateway', effect: 'reservation lifetime' },
  { name: 'GATEWAY_SWEEP_INTERVAL_SECONDS', reader: 'gateway', effect: 'hold sweeper interval' },
  { name: 'GATEWAY_CHECKPOINT_SECONDS', reader: 'gateway', effect: 'how often a running stream records its delivered usage' },
  { name: 'GATEWAY_GRANTS_POST', reader: 'gateway', effect: 'credit grants\' post mode (deferred or immediate)' },
  { name: 'GATEWAY_STAGE_TIMINGS', reader: 'gateway', effect: '1: a histogram of each pipeline stage\'s duration' },
  { name: 'REDIS_URL', reader: 'gateway', effect: 'shared rate limits and concurrency between replicas' },
  { name: 'GATEWAY_REDIS_PREFIX', reader: 'gateway', effect: 'namespace of the Redis keys (default gw:)' },
  { name: 'GATEWAY_BLOB_STORE', reader: 'gateway', effect: 'where file bytes live: local or s3' },
  { name: 'S3_BUCKET', reader: 'gateway', effect: 'the S3-compatible bucket' },
  { name: 'S3_REGION', reader: 'gateway', effect: 'its region (default us-east-1)' },
  { name: 'S3_ENDPOINT', reader: 'gateway', effect: 'its endpoint, for a non-AWS server' },
  { name: 'S3_FORCE_PATH_STYLE', reader: 'gateway', effect: 'true: path-style bucket URLs (MinIO)' },
  { name: 'AWS_ACCESS_KEY_ID', reader: 'gateway', effect: 'the bucket\'s access key' },
  { name: 'AWS_SECRET_ACCESS_KEY', reader: 'gateway', effect: 'the bucket\'s secret key' },
  { name: 'GATEWAY_PUBLIC_URL', reader: 'gateway', effect: 'the origin clients reach the gateway at (signed URLs, console links)' },
  { name: 'GATEWAY_URL_SIGNING_SECRET', reader: 'gateway', effect: 'the key signing upload and read URLs (default: kept in the store)' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', reader: 'gateway', effect: 'traces on: the OTLP/HTTP traces endpoint, used as given' },
  { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', reader: 'gateway', effect: 'traces on: the OTLP/HTTP base URL (/v1/traces appended)' },
  { name: 'OTEL_EXPORTER_OTLP_HEADERS', reader: 'gateway', effect: 'name=value pairs sent with each export' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', reader: 'gateway', effect: 'the same, for traces only' },
  { name: 'OTEL_EXPORTER_OTLP_TIMEOUT', reader: 'gateway', effect: 'longest wait for one export (ms, default 10000)' },
  { name: 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', reader: 'gateway', effect: 'the same, for traces only' },
  { name: 'OTEL_SERVICE_NAME', reader: 'gateway', effect: 'the service.name of the spans' },
  { name: 'OTEL_TRACES_SAMPLER', reader: 'gateway', effect: 'the sampler (default parentbased_always_on)' },
  { name: 'OTEL_TRACES_SAMPLER_ARG', reader: 'gateway', effect: 'the ratio samplers\' ratio' },
  { name: 'OTEL_SDK_DISABLED', reader: 'gateway', effect: 'true: traces off' },
  { name: 'OTEL_TRACES_EXPORTER', reader: 'gateway', effect: 'none: traces off' },
  { name: 'OTEL_BSP_SCHEDULE_DELAY', reader: 'gateway', effect: 'the batch span processor\'s delay (ms)' },
  { name: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', reader: 'gateway', effect: 'spans per export' },
  { name: 'OTEL_BSP_MAX_QUEUE_SIZE', reader: 'gateway', effect: 'spans queued at most (past it, dropped)' },
  { name: 'SMTP_URL', reader: 'gateway', effect: 'send the console\'s mail over SMTP' },
  { name: 'SMTP_FROM', reader: 'gateway', effect: 'the sender of that mail' },
  { name: 'SIM_PORT', reader: 'gateway', effect: 'the built-in simulator\'s port (also the standalone simulator\'s)' },
  { name: 'SIM_HOST', reader: 'simulator', effect: 'the standalone simulator\'s address' },
  { name: 'SIM_LATENCY_MS', reader: 'simulator', effect: 'a fixed latency per simulator answer' },
  { name: 'GATEWAY_URL', reader: 'cli', effect: 'where the CLI finds the gateway' },
];

/** The variables providers/*.yaml name: key locations (`env:NAME`), base URLs, `env_headers`, `only_when_set`. */
export function providerVariables(gateway: RawGateway): string[] {
  const names = new Set<string>();
  for (const { manifest: m } of gateway.providers) {
    for (const location of [m.auth.key, ...(m.auth.keys ?? [])]) if (location?.startsWith('env:')) names.add(location.slice(4));
    names.add(m.base_url.env);
    for (const variable of Object.values(m.env_headers ?? {})) names.add(variable);
    if (m.only_when_set) names.add(m.only_when_set);
  }
  return [...names].sort();
}
