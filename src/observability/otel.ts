/**
 * The OpenTelemetry SDK side of traces (issue 33 item 1), imported by traces.ts only when an OTLP
 * endpoint is set: a tracer provider of its own (nothing is registered globally, so two gateways in
 * one process, or an application embedding the gateway, keep theirs apart), the sampler the
 * environment names, and a BatchSpanProcessor in front of the OTLP/HTTP (JSON) exporter.
 *
 * Never in a request's way: ending a span only appends it to the processor's queue (past
 * maxQueueSize spans are dropped, not waited for); exports run on their own timer, at most
 * exportTimeoutMs each, so a collector that hangs costs spans, not requests.
 */
import { createTraceState, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-base';
import { redactSecrets } from './log.js';
import { formatTraceparent, parseTraceparent, type AttemptSpan, type AttemptStart, type RequestFacts, type RequestSpan, type RequestStart, type SamplerSettings, type TraceSettings, type Tracing } from './trace-types.js';

/** The longest prompt or answer text put on a span (content on); longer text is cut. */
const CONTENT_MAX_CHARS = 32_768;

/** The longest `tracestate` passed on (W3C Trace Context 3.3.1.5: 512 characters suffice for any vendor). */
const TRACESTATE_MAX_CHARS = 512;

/** The SDK sampler for the environment's choice. */
export function samplerOf(s: SamplerSettings): Sampler {
  switch (s.name) {
    case 'always_on': return new AlwaysOnSampler();
    case 'always_off': return new AlwaysOffSampler();
    case 'traceidratio': return new TraceIdRatioBasedSampler(s.ratio);
    case 'parentbased_always_off': return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio': return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(s.ratio) });
    default: return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The client's trace context as the parent of the request's span; the root context when it sent none valid. */
function parentOf(start: RequestStart): { context: Context; tracestate: string | null } {
  const parent = parseTraceparent(first(start.traceparent));
  if (!parent) return { context: ROOT_CONTEXT, tracestate: null };
  const raw = first(start.tracestate)?.trim();
  const tracestate = raw && raw.length <= TRACESTATE_MAX_CHARS ? raw : null;
  const context = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parent.traceId, spanId: parent.spanId, traceFlags: parent.flags, isRemote: true,
    ...(tracestate ? { traceState: createTraceState(tracestate) } : {}),
  });
  return { context, tracestate };
}

/** `text` cut to CONTENT_MAX_CHARS, any key-shaped run replaced (content never carries a key). */
function contentText(text: string | null | undefined): string | null {
  if (!text) return null;
  return redactSecrets(text.length > CONTENT_MAX_CHARS ? text.slice(0, CONTENT_MAX_CHARS) : text);
}

/** The attributes of `facts` that have a value (an attribute is never null). */
function requestAttributes(facts: RequestFacts): Attributes {
  const out: Attributes = {
    'gen_ai.operation.name': facts.operation,
    'http.response.status_code': facts.status,
    'gateway.attempts': facts.attempts,
    // Telemetry, not billing: the exact charge is the ledger's (integer nano-USD); here a double for dashboards.
    'gateway.cost_usd': facts.costNano === null ? 0 : Number(facts.costNano) / 1e9,
  };
  const optional: Array<[string, string | number | null]> = [
    ['gen_ai.system', facts.system], ['gen_ai.request.model', facts.requestModel], ['gen_ai.response.model', facts.responseModel],
    ['gen_ai.usage.input_tokens', facts.inputTokens], ['gen_ai.usage.output_tokens', facts.outputTokens],
    ['gateway.account_id', facts.accountId], ['gateway.key_id', facts.keyId], ['gateway.deployment', facts.deployment],
    ['error.type', facts.errorType],
  ];
  for (const [name, value] of optional) if (value !== null) out[name] = value;
  return out;
}

/** An attempt's child span. */
class OtelAttemptSpan implements AttemptSpan {
  readonly headers: Readonly<Record<string, string>>;
  private ended = false;

  constructor(private readonly span: Span, tracestate: string | null) {
    const traceparent = formatTraceparent({ traceId: span.spanContext().traceId, spanId: span.spanContext().spanId, flags: span.spanContext().traceFlags });
    this.headers = tracestate ? { traceparent, tracestate } : { traceparent };
  }

  end(outcome: string, upstreamStatus: number | null): void {
    if (this.ended) return;
    this.ended = true;
    if (this.span.isRecording()) {
      this.span.setAttribute('gateway.outcome', outcome);
      if (upstreamStatus !== null) this.span.setAttribute('http.response.status_code', upstreamStatus);
      // A client that left is no upstream failure.
      if (outcome !== 'ok' && outcome !== 'client_gone') {
        this.span.setAttribute('error.type', outcome);
        this.span.setStatus({ code: SpanStatusCode.ERROR, message: outcome });
      }
    }
    this.span.end();
  }
}

/** A request's span. */
class OtelRequestSpan implements RequestSpan {
  private ended = false;
  private readonly context: Context;

  constructor(private readonly tracer: Tracer, private readonly span: Span, private readonly tracestate: string | null, readonly content: boolean) {
    this.context = trace.setSpan(ROOT_CONTEXT, span);
  }

  attempt(start: AttemptStart): AttemptSpan {
    const span = this.tracer.startSpan(`${start.operation} ${start.model}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'gen_ai.operation.name': start.operation, 'gen_ai.system': start.provider, 'gen_ai.request.model': start.model,
        'gateway.deployment': start.deployment, 'gateway.attempt': start.number,
      },
    }, this.context);
    return new OtelAttemptSpan(span, this.tracestate);
  }

  end(facts: RequestFacts): void {
    if (this.ended) return;
    this.ended = true;
    const span = this.span;
    try {
      if (span.isRecording()) this.record(facts);
    } finally {
      span.end();
    }
  }

  /** Puts the request's attributes, and its content when on, on the (recording) span. */
  private record(facts: RequestFacts): void {
    const span = this.span;
    span.setAttributes(requestAttributes(facts));
    // GenAI semantic conventions: the span is named `{gen_ai.operation.name} {gen_ai.request.model}`.
    if (facts.requestModel) span.updateName(`${facts.operation} ${facts.requestModel}`);
    if (facts.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, ...(facts.errorType ? { message: facts.errorType } : {}) });
    if (!this.content) return;
    const prompt = contentText(facts.prompt?.());
    const completion = contentText(facts.completion?.());
    if (prompt) span.addEvent('gen_ai.content.prompt', { 'gen_ai.prompt': prompt });
    if (completion) span.addEvent('gen_ai.content.completion', { 'gen_ai.completion': completion });
  }
}

/** The longest a shutdown waits for the last exports. */
const SHUTDOWN_MAX_MS = 5000;

/** Resolves after `ms` (unref'd: it never keeps the process alive). */
function after(ms: number): Promise<void> {
  return new Promise((resolve) => { setTimeout(resolve, ms).unref(); });
}

/** The tracer provider, processor and exporter for `settings`. */
export function createTracing(settings: TraceSettings, content: () => boolean): Tracing {
  const exporter = new OTLPTraceExporter({ url: settings.url, headers: settings.headers, timeoutMillis: settings.exportTimeoutMs });
  const processor = new BatchSpanProcessor(exporter, {
    scheduledDelayMillis: settings.batch.scheduledDelayMs, maxExportBatchSize: settings.batch.maxExportBatchSize,
    maxQueueSize: settings.batch.maxQueueSize, exportTimeoutMillis: settings.exportTimeoutMs,
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    sampler: samplerOf(settings.sampler),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('ai-gateway');
  // Bounded: a collector that does not answer never holds a flush past the export timeout, nor a
  // shutdown (a drain, a stop) past SHUTDOWN_MAX_MS: the last spans are lost, the process is not held.
  const bounded = (work: Promise<void>, ms: number): Promise<void> => Promise.race([work.catch(() => undefined), after(ms)]);
  return {
    endpoint: settings.url,
    serviceName: settings.serviceName,
    request(start) {
      const { context, tracestate } = parentOf(start);
      const span = tracer.startSpan(`${start.method} ${start.path}`, {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': start.method, 'http.route': start.path, 'gateway.route': start.route, 'gateway.request_id': start.requestId },
      }, context);
      return new OtelRequestSpan(tracer, span, tracestate, content());
    },
    flush: () => bounded(provider.forceFlush(), settings.exportTimeoutMs),
    shutdown: () => bounded(provider.shutdown(), Math.min(settings.exportTimeoutMs, SHUTDOWN_MAX_MS)),
  };
}
