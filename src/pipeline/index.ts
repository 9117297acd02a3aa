/**
 * The generic runtime: seven stages in a fixed order, auth -> validate -> route -> admission ->
 * translate -> forward -> meter, compiled once per route. One error path renders every failure in the client's
 * format and guarantees that a reservation is never left open by a failed request.
 */
import { randomId } from '../ledger/ids.js';
import { Cancellation } from '../cancel.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CompiledGateway, CompiledRoute } from '../config/types.js';
import { DependencyUnavailableError, GatewayError, toGatewayError } from '../errors.js';
import { clientFormat } from '../formats/index.js';
import { STAGE_TIMINGS_ENABLED, timeStages } from '../observability/stage-timings.js';
import type { RequestContext, StageHandler } from './context.js';
import { releaseHold } from './hold.js';
import { endRequestSpan, openRequestSpan } from './trace.js';
import type { Runtime, Stage } from './stage.js';
import { admissionStage } from './stages/admission.js';
import { authStage } from './stages/auth.js';
import { forwardStage } from './stages/forward.js';
import { meterStage } from './stages/meter.js';
import { routeStage } from './stages/route.js';
import { translateStage } from './stages/translate.js';
import { validateStage } from './stages/validate.js';

/** The fixed stage order. */
export const STAGES: readonly Stage[] = [authStage, validateStage, routeStage, admissionStage, translateStage, forwardStage, meterStage];

/** A route ready to serve: its present stages, compiled. */
export interface CompiledPipeline { route: CompiledRoute; handlers: StageHandler[]; stageNames: string[]; }

/** Compiles every stage for a route; absent stages are dropped. */
export function compilePipeline(route: CompiledRoute, runtime: Runtime): CompiledPipeline {
  const handlers: StageHandler[] = [];
  const stageNames: string[] = [];
  for (const stage of STAGES) {
    const handler = stage.compile(route, runtime);
    if (handler) { handlers.push(handler); stageNames.push(stage.name); }
  }
  // GATEWAY_STAGE_TIMINGS=1: each stage timed (a choice made here, once; nothing per request when off).
  return { route, handlers: STAGE_TIMINGS_ENABLED ? timeStages(handlers, stageNames) : handlers, stageNames };
}

/** A fresh request id: `req_` and 24 hex characters. */
export function newRequestId(): string {
  return randomId('req_');
}

async function sendError(ctx: RequestContext, error: GatewayError): Promise<void> {
  if (ctx.started) {
    if (!ctx.reply.raw.writableEnded && !ctx.reply.raw.destroyed) ctx.reply.raw.end(ctx.format.streamErrorFrame(error));
    return;
  }
  if (ctx.clientGone.aborted) return;
  for (const [name, value] of Object.entries(error.extra.headers ?? {})) ctx.reply.header(name, value);
  await ctx.reply.code(error.status).header('content-type', 'application/json; charset=utf-8').send(ctx.format.errorBody(error));
}

/** 499: the client closed the connection before the answer (nginx's convention), for logs and metrics. */
const CLIENT_CLOSED = 499;

function observe(ctx: RequestContext, runtime: Runtime, seconds: number, errorType: string | null): void {
  const status = ctx.clientGone.aborted && !ctx.reply.raw.writableFinished ? CLIENT_CLOSED : ctx.reply.raw.statusCode;
  // Traces on (issue 33 item 1): the request's span ends after metering, with what it was charged.
  if (ctx.trace) endRequestSpan(ctx, status, errorType);
  const route = ctx.route.manifest.id;
  runtime.metrics?.requestFinished(route, ctx.model?.provider.id ?? null, status, seconds);
  runtime.logger?.info({
    request_id: ctx.requestId, route, status, duration_ms: Math.round(seconds * 1e4) / 10,
    account_id: ctx.auth?.accountId, model: ctx.model?.offering.id, stream: ctx.stream,
    // Each upstream attempt: deployment, outcome (ok, a status, or how it failed) and milliseconds (issue 29 item 7).
    ...(ctx.routing?.attempts.length ? { attempts: ctx.routing.attempts } : {}),
  }, 'request');
}

/** Runs one request through a compiled pipeline. */
export async function runPipeline(
  pipeline: CompiledPipeline, gateway: CompiledGateway, runtime: Runtime,
  req: FastifyRequest, reply: FastifyReply, params: Record<string, string>, onError: (error: unknown) => void,
): Promise<void> {
  const clientGone = new Cancellation();
  const ctx: RequestContext = {
    requestId: req.id, gateway, route: pipeline.route, format: clientFormat(pipeline.route.manifest.format),
    req, reply, params, clientGone, work: clientGone, auth: null, limit: null, body: {}, files: [], features: [], beforeAnswer: [], onFailure: [], upstreamStatus: null, stream: false,
    model: null, routing: null, upstream: null, translation: null, hold: null, outcome: null, started: false, finish: null, trace: null,
  };
  // One check when traces are off (runtime.tracing absent): nothing else on the request path changes.
  if (runtime.tracing) ctx.trace = openRequestSpan(runtime.tracing, ctx);
  let errorType: string | null = null;
  const started = performance.now();
  runtime.inflight.add(ctx);
  reply.raw.on('close', () => { if (!reply.raw.writableFinished) ctx.clientGone.abort(); });
  try {
    for (const handler of pipeline.handlers) {
      // A stage that finished synchronously returns nothing: no await, no turn of the microtask queue.
      const pending = handler(ctx);
      if (pending) await pending;
      if (ctx.answered) break;
    }
    for (const hook of ctx.beforeAnswer) await hook();
    await ctx.finish?.();
  } catch (caught) {
    let error = caught;
    for (const hook of ctx.onFailure) error = await hook(error).catch((e: unknown) => { onError(e); return error; });
    // An unreachable store or limiter is reported once per outage, not once per request.
    if (!(caught instanceof GatewayError) && !(caught instanceof DependencyUnavailableError)) onError(caught);
    // The reservation is given back before the error is answered: a client that sees the error sees nothing held.
    await releaseHold(ctx, runtime).catch(onError);
    const answered = toGatewayError(error);
    errorType = answered.code;
    await sendError(ctx, answered).catch(onError);
  } finally {
    // A failure anywhere before settlement gives the reservation back: nothing is charged.
    await releaseHold(ctx, runtime).catch(onError);
    // Frees the concurrency slot and corrects the limiter's estimate to what was billed (0 if nothing).
    if (ctx.limit) await runtime.limiter.finish(ctx.limit.ticket, ctx.limit.billedUnits).catch(onError);
    runtime.inflight.delete(ctx);
    observe(ctx, runtime, (performance.now() - started) / 1000, errorType);
  }
}
