/**
 * Prometheus metrics without dependencies: a registry of counters, histograms and gauges rendered in
 * the text exposition format 0.0.4, the gateway's own metric set (`GatewayMetrics`) and `GET /metrics`.
 *
 * Hot path: one Map lookup per update, keyed by the label values (joined with NUL when there are
 * several); a series' label text is escaped once, when the series is first seen. Rendering builds the
 * text only at scrape time. Label values must come from the configuration (route ids, provider ids,
 * offering models, status codes), never from raw client input: every distinct value is a series kept
 * for the life of the process.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { logLinesDropped } from './log-destination.js';

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** The content type of the text exposition format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Escapes a label value: backslash, double quote and line feed. */
export function escapeLabelValue(value: string): string {
  return /[\\"\n]/.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : value;
}

/** Escapes HELP text: backslash and line feed. */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A sample value as Prometheus reads it (Go ParseFloat syntax, with +Inf/-Inf/NaN). */
export function formatValue(value: number | bigint): string {
  if (typeof value === 'bigint') return value.toString();
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function seriesKey(values: readonly string[]): string {
  return values.length === 1 ? values[0]! : values.length === 0 ? '' : values.join('\u0000');
}

function labelText(names: readonly string[], values: readonly string[]): string {
  let text = '';
  for (let i = 0; i < names.length; i++) text += `${i ? ',' : ''}${names[i]}="${escapeLabelValue(values[i]!)}"`;
  return text;
}

function checkNames(name: string, labelNames: readonly string[], reserved: readonly string[] = []): void {
  if (!METRIC_NAME.test(name)) throw new TypeError(`invalid metric name: ${name}`);
  const seen = new Set<string>();
  for (const label of labelNames) {
    if (!LABEL_NAME.test(label) || label.startsWith('__')) throw new TypeError(`invalid label name for ${name}: ${label}`);
    if (reserved.includes(label)) throw new TypeError(`label name ${label} is reserved in ${name}`);
    if (seen.has(label)) throw new TypeError(`duplicate label name for ${name}: ${label}`);
    seen.add(label);
  }
}

function checkArity(name: string, labelNames: readonly string[], values: readonly string[]): void {
  if (values.length !== labelNames.length) {
    throw new TypeError(`${name} takes ${labelNames.length} label values (${labelNames.join(', ')}), got ${values.length}`);
  }
}

/** A metric the registry can render. */
export interface Metric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  /** Appends this metric's sample lines (without HELP/TYPE) to `out`. */
  collect(out: string[]): Promise<void> | void;
}

interface Series<V> { labels: string; value: V; }

abstract class Labelled<V> {
  protected readonly series = new Map<string, Series<V>>();
  constructor(readonly name: string, readonly help: string, readonly labelNames: readonly string[]) {}

  protected abstract zero(): V;

  /** The series for these label values, created at zero when new. */
  protected get(values: readonly string[]): Series<V> {
    const key = seriesKey(values);
    let found = this.series.get(key);
    if (!found) {
      checkArity(this.name, this.labelNames, values);
      found = { labels: labelText(this.labelNames, values), value: this.zero() };
      this.series.set(key, found);
    }
    return found;
  }

  /** Creates the series at zero so it is exported before its first event (rate() then sees the first one). */
  init(values: readonly string[]): this {
    this.get(values);
    return this;
  }

  protected lines(out: string[]): void {
    for (const s of this.series.values()) out.push(s.labels ? `${this.name}{${s.labels}} ${formatValue(s.value as number | bigint)}` : `${this.name} ${formatValue(s.value as number | bigint)}`);
  }
}

/** A monotonic counter of numbers. An unlabelled counter is exported at 0 from the start. */
export class Counter extends Labelled<number> implements Metric {
  readonly type = 'counter' as const;
  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    super(name, help, labelNames);
    checkNames(name, labelNames);
    if (labelNames.length === 0) this.get([]);
  }
  protected zero(): number { return 0; }
  /** Adds `by` (default 1; must be finite and >= 0). */
  inc(values: readonly string[] = [], by = 1): void {
    if (!(by >= 0) || by === Infinity) throw new RangeError(`${this.name}: a counter only increases by a finite amount >= 0 (got ${by})`);
    this.get(values).value += by;
  }
  /** The current value, or 0 for an unseen series (for tests and diagnostics). */
  value(values: readonly string[] = []): number { return this.series.get(seriesKey(values))?.value ?? 0; }
  collect(out: string[]): void { this.lines(out); }
}

/** A monotonic integer counter kept as a bigint: exact past 2^53, printed as an integer. */
export class BigIntCounter extends Labelled<bigint> implements Metric {
  readonly type = 'counter' as const;
  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    super(name, help, labelNames);
    checkNames(name, labelNames);
    if (labelNames.length === 0) this.get([]);
  }
  protected zero(): bigint { return 0n; }
  /** Adds `by` (must be >= 0n). */
  inc(values: readonly string[], by: bigint): void {
    if (by < 0n) throw new RangeError(`${this.name}: a counter only increases (got ${by})`);
    this.get(values).value += by;
  }
  value(values: readonly string[] = []): bigint { return this.series.get(seriesKey(values))?.value ?? 0n; }
  collect(out: string[]): void { this.lines(out); }
}

/** An unlabelled counter kept by another module, read at every scrape (its reader must only grow). */
export class ReadCounter implements Metric {
  readonly type = 'counter' as const;
  constructor(readonly name: string, readonly help: string, private readonly read: () => number) {
    checkNames(name, []);
  }
  collect(out: string[]): void { out.push(`${this.name} ${formatValue(this.read())}`); }
}

/** A value read at scrape time; may be async. */
export type GaugeCallback = () => Promise<number> | number;

/**
 * A gauge: set/inc/dec per label set, or, for an unlabelled gauge, a callback read at scrape time.
 * A callback that throws, rejects, returns a non-number or takes longer than `timeoutMs` leaves the
 * sample out of that scrape (the metric is then absent rather than wrong).
 */
export class Gauge extends Labelled<number> implements Metric {
  readonly type = 'gauge' as const;
  private callback: GaugeCallback | null = null;
  constructor(name: string, help: string, labelNames: readonly string[] = [], private readonly timeoutMs = 2_000) {
    super(name, help, labelNames);
    checkNames(name, labelNames);
  }
  protected zero(): number { return 0; }
  set(values: readonly string[], value: number): void { this.get(values).value = value; }
  inc(values: readonly string[] = [], by = 1): void { this.get(values).value += by; }
  dec(values: readonly string[] = [], by = 1): void { this.get(values).value -= by; }
  value(values: readonly string[] = []): number { return this.series.get(seriesKey(values))?.value ?? 0; }
  /** Reads the value from `fn` at every scrape (unlabelled gauges only); replaces any set value. */
  collectWith(fn: GaugeCallback | null): this {
    if (this.labelNames.length) throw new TypeError(`${this.name}: a callback gauge takes no labels`);
    this.callback = fn;
    this.series.clear();
    return this;
  }
  async collect(out: string[]): Promise<void> {
    if (!this.callback) { this.lines(out); return; }
    const value = await readWithin(this.callback, this.timeoutMs);
    if (value !== null) out.push(`${this.name} ${formatValue(value)}`);
  }
}

async function readWithin(fn: GaugeCallback, timeoutMs: number): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const value = await Promise.race([
      Promise.resolve().then(fn),
      new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), timeoutMs); timer.unref(); }),
    ]);
    return typeof value === 'number' ? value : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

interface HistogramState { labels: string; counts: number[]; sum: number; count: number; }

/**
 * A histogram with fixed upper bounds (`le`, inclusive). Observing is one bucket search and three
 * additions; the cumulative `_bucket` series, `+Inf`, `_sum` and `_count` are built at render.
 */
export class Histogram implements Metric {
  readonly type = 'histogram' as const;
  readonly buckets: readonly number[];
  private readonly bucketLabels: readonly string[];
  private readonly series = new Map<string, HistogramState>();
  constructor(readonly name: string, readonly help: string, readonly labelNames: readonly string[], buckets: readonly number[]) {
    checkNames(name, labelNames, ['le']);
    const sorted = [...buckets].filter((b) => b !== Infinity).sort((a, b) => a - b);
    if (!sorted.length || sorted.some((b, i) => !Number.isFinite(b) || (i > 0 && b === sorted[i - 1]))) {
      throw new TypeError(`${name}: buckets must be distinct finite numbers`);
    }
    this.buckets = sorted;
    this.bucketLabels = [...sorted.map(formatValue), '+Inf'];
    if (labelNames.length === 0) this.get([]);
  }
  private get(values: readonly string[]): HistogramState {
    const key = seriesKey(values);
    let found = this.series.get(key);
    if (!found) {
      checkArity(this.name, this.labelNames, values);
      found = { labels: labelText(this.labelNames, values), counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
      this.series.set(key, found);
    }
    return found;
  }
  /** Records one observation; NaN is ignored. */
  observe(values: readonly string[], value: number): void {
    if (Number.isNaN(value)) return;
    const state = this.get(values);
    // First bound >= value (binary search); past the last bound: the +Inf slot.
    const b = this.buckets;
    let lo = 0, hi = b.length;
    while (lo < hi) { const mid = (lo + hi) >>> 1; if (b[mid]! < value) lo = mid + 1; else hi = mid; }
    state.counts[lo]! += 1;
    state.sum += value;
    state.count += 1;
  }
  /** Count and sum of one series (for tests and diagnostics). */
  snapshot(values: readonly string[] = []): { count: number; sum: number } {
    const s = this.series.get(seriesKey(values));
    return { count: s?.count ?? 0, sum: s?.sum ?? 0 };
  }
  collect(out: string[]): void {
    for (const s of this.series.values()) {
      const prefix = s.labels ? `${s.labels},` : '';
      let cumulative = 0;
      for (let i = 0; i < s.counts.length; i++) {
        cumulative += s.counts[i]!;
        out.push(`${this.name}_bucket{${prefix}le="${this.bucketLabels[i]}"} ${cumulative}`);
      }
      const braces = s.labels ? `{${s.labels}}` : '';
      out.push(`${this.name}_sum${braces} ${formatValue(s.sum)}`, `${this.name}_count${braces} ${s.count}`);
    }
  }
}

/** A set of metrics rendered together. Names are unique. */
export class Registry {
  private readonly metrics: Metric[] = [];
  private readonly names = new Set<string>();

  register<M extends Metric>(metric: M): M {
    if (this.names.has(metric.name)) throw new TypeError(`metric already registered: ${metric.name}`);
    this.names.add(metric.name);
    this.metrics.push(metric);
    return metric;
  }

  /** The text exposition format 0.0.4: HELP, TYPE and samples per metric, one trailing newline. */
  async render(): Promise<string> {
    // Callbacks run concurrently; the synchronous metrics are then read in one go (a consistent snapshot).
    const parts = await Promise.all(this.metrics.map(async (m) => {
      const out: string[] = [`# HELP ${m.name} ${escapeHelp(m.help)}`, `# TYPE ${m.name} ${m.type}`];
      if (m instanceof Gauge) await m.collect(out);
      return out;
    }));
    for (let i = 0; i < this.metrics.length; i++) {
      const m = this.metrics[i]!;
      if (!(m instanceof Gauge)) await m.collect(parts[i]!);
    }
    return parts.map((p) => p.join('\n')).join('\n') + '\n';
  }
}

/** Upper bounds for request durations in seconds: 0.5 ms to 60 s. */
export const DURATION_BUCKETS_SECONDS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60];

/** Upper bounds for stage durations in seconds: 10 µs to 60 s, fine below 3 ms and around a 20 ms upstream. */
export const STAGE_BUCKETS_SECONDS: readonly number[] = [
  0.00001, 0.000025, 0.00005, 0.000075, 0.0001, 0.00015, 0.0002, 0.0003, 0.0004, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003,
  0.005, 0.0075, 0.01, 0.015, 0.02, 0.0205, 0.021, 0.0215, 0.022, 0.023, 0.025, 0.03, 0.04, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

/**
 * `gateway_stage_duration_seconds{stage}`: the pipeline's per-stage timings, kept only when the
 * process starts with GATEWAY_STAGE_TIMINGS=1 (src/observability/stage-timings.ts), else null.
 */
export const STAGE_DURATIONS: Histogram | null = process.env.GATEWAY_STAGE_TIMINGS === '1'
  ? new Histogram('gateway_stage_duration_seconds', 'Wall time per pipeline stage (auth, validate, admission, translate, upstream, settle, write), in seconds; recorded only with GATEWAY_STAGE_TIMINGS=1.', ['stage'], STAGE_BUCKETS_SECONDS)
  : null;

/**
 * `gateway_store_statement_duration_seconds{statement}`: each prepared store statement's round trip
 * (the ledger's reserve, settle, release and batches), kept only with GATEWAY_STAGE_TIMINGS=1
 * (src/observability/stage-timings.ts), else null.
 */
export const STATEMENT_DURATIONS: Histogram | null = STAGE_DURATIONS
  ? new Histogram('gateway_store_statement_duration_seconds', "Wall time per prepared store statement (the ledger's), from the call to its rows, in seconds; recorded only with GATEWAY_STAGE_TIMINGS=1.", ['statement'], STAGE_BUCKETS_SECONDS)
  : null;

/** Token usage as the token meter reports it (the same fields as TokenUsage; src/meters/token-meter.ts). */
export interface MeteredUsage { input: number; output: number; cachedInput: number; cacheWrite: number; reasoning: number; }

/** Which limit refused a request. */
export type LimiterScope = 'account' | 'key';
export type LimiterLimit = 'requests' | 'tokens' | 'concurrency';

/** Label value used when a request ended before a provider was chosen. */
export const NO_PROVIDER = 'none';

const STATUS_TEXT: string[] = Array.from({ length: 600 }, (_, i) => String(i));

/** The gateway's metrics, with one method per thing the pipeline does. */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly requests: Counter;
  readonly requestDuration: Histogram;
  readonly upstreamErrors: Counter;
  readonly upstreamAttempts: Counter;
  readonly circuitStates: Gauge;
  readonly tokens: Counter;
  readonly cost: BigIntCounter;
  readonly holdsOpen: Gauge;
  readonly limiterRejections: Counter;
  readonly limiterFallbacks: Counter;
  readonly streamsOpen: Gauge;
  readonly configReloads: Counter;
  readonly residentMemory: Gauge;
  readonly uptime: Gauge;

  /** `collectTimeoutMs` bounds each scrape-time callback (the open-holds query). */
  constructor(opts: { collectTimeoutMs?: number } = {}) {
    const r = this.registry;
    const timeout = opts.collectTimeoutMs ?? 2_000;
    this.requests = r.register(new Counter('gateway_requests_total', 'Requests answered, by route and HTTP status.', ['route', 'status']));
    this.requestDuration = r.register(new Histogram('gateway_request_duration_seconds', 'Time from request to the last byte of the answer, in seconds.', ['route', 'provider'], DURATION_BUCKETS_SECONDS));
    this.upstreamErrors = r.register(new Counter('gateway_upstream_errors_total', 'Failed upstream calls, by provider and error code.', ['provider', 'code']));
    this.upstreamAttempts = r.register(new Counter('gateway_upstream_attempts_total', 'Upstream attempts, by provider, deployment and outcome (ok, cut, client_gone, an HTTP status, or how the attempt failed: connect, headers_timeout, first_token_timeout, idle_timeout, ...).', ['provider', 'deployment', 'outcome']));
    this.circuitStates = r.register(new Gauge('gateway_deployment_circuit_state', "Each deployment's circuit breaker: 0 closed, 1 half-open, 2 open (per process).", ['deployment']));
    this.tokens = r.register(new Counter('gateway_tokens_metered_total', 'Tokens billed, by provider, model and kind (input, output, cached, cache_write, reasoning).', ['provider', 'model', 'kind']));
    this.cost = r.register(new BigIntCounter('gateway_cost_metered_nano_usd_total', 'Amount billed, in nano-USD (exact integer).', ['provider', 'model']));
    this.holdsOpen = r.register(new Gauge('gateway_holds_open', 'Reservations not yet settled or released.', [], timeout));
    this.limiterRejections = r.register(new Counter('gateway_limiter_rejections_total', 'Requests refused by the rate limiter, by scope and limit.', ['scope', 'limit']));
    this.limiterFallbacks = r.register(new Counter('gateway_limiter_fallback_total', 'Requests admitted on in-memory limits because the shared limiter backend was unreachable (limits.on_backend_error: fail_open).', []));
    this.streamsOpen = r.register(new Gauge('gateway_streams_open', 'Streaming answers in progress.'));
    this.configReloads = r.register(new Counter('gateway_config_reloads_total', 'Configuration reloads, by result (ok, error).', ['result']));
    this.residentMemory = r.register(new Gauge('gateway_process_resident_memory_bytes', 'Resident set size of the process, in bytes.').collectWith(() => process.memoryUsage.rss()));
    this.uptime = r.register(new Gauge('gateway_process_uptime_seconds', 'Seconds since the process started.').collectWith(() => process.uptime()));
    r.register(new ReadCounter('gateway_log_lines_dropped_total', 'Log lines dropped because standard output could not keep up (its bound of lines waiting was full).', logLinesDropped));
    if (STAGE_DURATIONS) r.register(STAGE_DURATIONS);
    if (STATEMENT_DURATIONS) r.register(STATEMENT_DURATIONS);
    for (const scope of ['account', 'key']) for (const limit of ['requests', 'tokens', 'concurrency']) this.limiterRejections.init([scope, limit]);
    this.configReloads.init(['ok']).init(['error']);
    this.limiterFallbacks.init([]);
    this.streamsOpen.set([], 0);
  }

  /** One answered request: its route id, the provider (null before one was chosen), the HTTP status and the duration. */
  requestFinished(route: string, provider: string | null, status: number, seconds: number): void {
    this.requests.inc([route, STATUS_TEXT[status] ?? String(status)]);
    this.requestDuration.observe([route, provider ?? NO_PROVIDER], seconds);
  }

  /** One failed upstream call; `code` should be a bounded set (HTTP status or gateway error code). */
  upstreamError(provider: string, code: string | number): void {
    this.upstreamErrors.inc([provider, typeof code === 'number' ? STATUS_TEXT[code] ?? String(code) : code]);
  }

  /** One upstream attempt (issue 29 item 7); `outcome` is a bounded set (see the metric's help). */
  upstreamAttempt(provider: string, deployment: string, outcome: string): void {
    this.upstreamAttempts.inc([provider, deployment, outcome]);
  }

  /** A deployment's circuit changed state (0 closed, 1 half-open, 2 open). */
  circuitState(deployment: string, value: number): void {
    this.circuitStates.set([deployment], value);
  }

  /**
   * One settled charge: its amount, and tokens by kind when the meter counts tokens (null for the
   * other meters, src/meters). Zero, negative or non-finite parts are skipped.
   */
  metered(provider: string, model: string, usage: MeteredUsage | null, amountNano: bigint): void {
    if (amountNano > 0n) this.cost.inc([provider, model], amountNano);
    if (!usage) return;
    const t = this.tokens;
    if (usage.input > 0 && usage.input !== Infinity) t.inc([provider, model, 'input'], usage.input);
    if (usage.output > 0 && usage.output !== Infinity) t.inc([provider, model, 'output'], usage.output);
    if (usage.cachedInput > 0 && usage.cachedInput !== Infinity) t.inc([provider, model, 'cached'], usage.cachedInput);
    if (usage.cacheWrite > 0 && usage.cacheWrite !== Infinity) t.inc([provider, model, 'cache_write'], usage.cacheWrite);
    if (usage.reasoning > 0 && usage.reasoning !== Infinity) t.inc([provider, model, 'reasoning'], usage.reasoning);
  }

  /** One request refused by the rate limiter. */
  limiterRejected(scope: LimiterScope, limit: LimiterLimit): void {
    this.limiterRejections.inc([scope, limit]);
  }

  /** One request admitted on in-memory limits during a limiter backend outage (fail_open). */
  limiterFallback(): void {
    this.limiterFallbacks.inc([]);
  }

  /** A streaming answer started; pair with exactly one streamClosed(). */
  streamOpened(): void { this.streamsOpen.inc(); }
  streamClosed(): void { this.streamsOpen.dec(); }

  /** One configuration reload attempt. */
  configReloaded(ok: boolean): void { this.configReloads.inc([ok ? 'ok' : 'error']); }

  /** The source of gateway_holds_open, read at every scrape (bounded by collectTimeoutMs). */
  setHoldsOpen(fn: () => Promise<number> | number): void { this.holdsOpen.collectWith(fn); }

  /** The exposition text. */
  render(): Promise<string> { return this.registry.render(); }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * `GET /metrics`: open when `token` is null, else `Authorization: Bearer <token>` (compared in
 * constant time over SHA-256 digests) or a 401 in the OpenAI error shape.
 */
export function registerMetricsRoute(app: FastifyInstance, metrics: GatewayMetrics, token: string | null): void {
  if (token === '') throw new TypeError('the metrics token must be null (open) or non-empty');
  const expected = token === null ? null : digest(token);
  const authorized = (header: string | undefined): boolean => {
    if (!expected) return true;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    return timingSafeEqual(digest(match?.[1] ?? ''), expected) && match !== null;
  };
  app.get('/metrics', async (req, reply) => {
    if (!authorized(req.headers.authorization)) {
      return reply.code(401).header('www-authenticate', 'Bearer').header('content-type', 'application/json; charset=utf-8').send({
        error: { message: 'Missing or invalid metrics token.', type: 'authentication_error', code: 'invalid_api_key', param: null },
      });
    }
    const body = await metrics.render();
    return reply.header('content-type', PROMETHEUS_CONTENT_TYPE).header('cache-control', 'no-store').send(body);
  });
}
