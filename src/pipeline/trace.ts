/**
 * The request's facts for its trace span (issue 33 item 1; src/observability/traces.ts). Called only
 * when traces are on: runPipeline opens the span as the request enters and ends it after metering,
 * the attempt loop opens a child per upstream attempt.
 */
import type { CompiledDeployment, CompiledRoute } from '../config/types.js';
import type { RequestFacts, RequestSpan, Tracing } from '../observability/traces.js';
import type { RequestContext } from './context.js';

/**
 * `gen_ai.operation.name` of a route (GenAI semantic conventions): `chat` and `embeddings` where the
 * route serves those model types, else the route's own id (images-generations, speech, ...), as the
 * conventions allow for operations they do not name.
 */
export function operationName(route: CompiledRoute): string {
  if (route.serviceTypes.has('CHAT')) return 'chat';
  if (route.serviceTypes.has('EMBEDDING')) return 'embeddings';
  return route.manifest.id;
}

/** Opens the request's span, continuing the client's trace context. */
export function openRequestSpan(tracing: Tracing, ctx: RequestContext): RequestSpan {
  const headers = ctx.req.headers;
  return tracing.request({
    method: ctx.req.method, path: ctx.route.manifest.path, route: ctx.route.manifest.id, requestId: ctx.requestId,
    traceparent: headers.traceparent, tracestate: headers.tracestate,
  });
}

/** Opens the span of one upstream attempt, its context in the attempt's options for the upstream request. */
export function openAttemptSpan(ctx: RequestContext, d: CompiledDeployment, attempt: number): void {
  const current = ctx.routing?.current;
  if (!ctx.trace || !current) return;
  current.trace = ctx.trace.attempt({ number: attempt, deployment: d.id, provider: d.provider.id, operation: operationName(ctx.route), model: d.offering.upstreamModel });
}

/** Ends the current attempt's span with its outcome. */
export function endAttemptSpan(ctx: RequestContext, outcome: string): void {
  const current = ctx.routing?.current;
  if (!current?.trace) return;
  const status = /^\d{3}$/.test(outcome) ? Number(outcome) : outcome === 'ok' || outcome === 'cut' ? ctx.upstreamStatus : null;
  current.trace.end(outcome, status);
  current.trace = null;
}

function tokens(reported: unknown, name: 'input' | 'output'): number | null {
  const value = typeof reported === 'object' && reported !== null ? (reported as Record<string, unknown>)[name] : undefined;
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** The model the upstream says answered (a JSON answer's `model`), else the serving deployment's. */
function responseModel(ctx: RequestContext): string | null {
  const body = ctx.outcome?.answer?.upstreamBody;
  const named = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).model : undefined;
  if (typeof named === 'string' && named) return named;
  return ctx.outcome && ctx.outcome.delivery !== 'none' ? ctx.routing?.deployment.offering.upstreamModel ?? null : null;
}

/** Ends the request's span with what the request came to; `status` is the one answered, `errorType` its error code. */
export function endRequestSpan(ctx: RequestContext, status: number, errorType: string | null): void {
  const span = ctx.trace;
  if (!span) return;
  try {
    span.end(requestFacts(ctx, status, errorType));
  } catch {
    // A span never fails the request it describes (it has already been answered).
  }
}

/** What the request came to, as its span reports it. */
function requestFacts(ctx: RequestContext, status: number, errorType: string | null): RequestFacts {
  const requested = ctx.body.model;
  const reported = ctx.outcome?.reported;
  return {
    status, operation: operationName(ctx.route), system: ctx.model?.provider.id ?? null,
    requestModel: typeof requested === 'string' && requested ? requested : ctx.model?.offering.id ?? null,
    responseModel: responseModel(ctx), inputTokens: tokens(reported, 'input'), outputTokens: tokens(reported, 'output'),
    accountId: ctx.auth?.accountId ?? null, keyId: ctx.auth?.keyId ?? null,
    deployment: ctx.routing?.attempts.at(-1)?.deployment ?? null, costNano: ctx.chargedNano ?? null,
    attempts: ctx.routing?.attempts.length ?? 0, errorType,
    // Content on only (observability.traces.content): the client's body and the text it was answered.
    prompt: () => JSON.stringify(ctx.body),
    completion: () => ctx.outcome?.deliveredText ?? null,
  };
}
