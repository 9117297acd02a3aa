/**
 * Forwards a non-streaming proxy request (polling its job when the operation answers with one, and
 * fetching the output a finished job names) and answers the client with the translated JSON.
 */
import { GatewayError } from '../../errors.js';
import { jsonWithCost } from '../../formats/usage-cost.js';
import { readPointer } from '../../meters/pointer.js';
import { AttemptError, retryAfterMs } from '../../upstream/attempt-error.js';
import { readBounded } from '../../upstream/body.js';
import { transportError, type UpstreamResponse } from '../../upstream/client.js';
import type { RequestContext } from '../context.js';
import type { Runtime } from '../stage.js';
import { streamBinary, streamsThrough } from './binary-stream.js';
import { answerWithFile } from './file.js';
import { fetchOutput } from './outputs.js';
import { jobStart, pollJob } from './poll.js';
import type { GeneratedOutput, TranslatedAnswer } from '../../translate/types.js';
import { answerModelId } from '../../config/aliases.js';
import { MODEL_PARAM } from '../../config/url-params.js';

const NOTHING = { delivery: 'none', reported: null, deliveredText: '' } as const;
/** How an operation path names the served model. */
const MODEL_PLACEHOLDER = `{${MODEL_PARAM}}`;

/**
 * The answer with `usage.cost` (issue 31 item 12) where its format carries one: what the meter settled
 * the request for, 0 when it charged nothing; serialized here so the decimal keeps its exact digits.
 */
function withUsageCost(ctx: RequestContext, body: Record<string, unknown>): Record<string, unknown> | string {
  const places = ctx.format.usageCost;
  if (!places || !ctx.route.billable) return body;
  return jsonWithCost(body, places.answer, ctx.chargedNano ?? 0n) ?? body;
}

/** Reads an upstream body as JSON; null when it is not JSON (error bodies of proxies, HTML pages). */
export async function readJsonBody(response: UpstreamResponse): Promise<unknown> {
  const text = await response.body.text();
  try { return JSON.parse(text); } catch { return null; }
}

/**
 * The operation's path parameters from the client request (the route's `path_params`); a missing one
 * is the client's 400. `{model}`, unless the route names it, is the served deployment's upstream model:
 * the one way a vendor's URL names the model (/models/{model}:generateContent, /model/{model}/converse).
 */
function pathParamsOf(ctx: RequestContext, operation: string): Record<string, string> | null {
  const entries = Object.entries(ctx.upstream!.choice.pathParams);
  // Only an operation sent whose path names {model} gets it (no object and no path fill for the others).
  const op = ctx.model?.provider.operations[operation];
  const upstreamModel = op && (op.path.includes(MODEL_PLACEHOLDER) || op.streamPath?.includes(MODEL_PLACEHOLDER)) ? ctx.model!.offering.upstreamModel : undefined;
  if (entries.length === 0) return upstreamModel ? { [MODEL_PARAM]: upstreamModel } : null;
  const params: Record<string, string> = upstreamModel ? { [MODEL_PARAM]: upstreamModel } : {};
  for (const [name, pointer] of entries) {
    const value = readPointer(ctx.body, pointer);
    if (typeof value !== 'string' || value === '') throw new GatewayError('invalid_request', `Missing required parameter: '${pointer.join('.')}'.`, { param: pointer.join('.') });
    params[name] = value;
  }
  return params;
}

/**
 * The operation the request is sent to: the chosen one, or its `stream_operation` when the request
 * streams (a vendor whose stream is another endpoint, issue 32 item 2: ConverseStream beside Converse).
 */
export function sentOperation(ctx: RequestContext): string {
  const name = ctx.upstream!.choice.operation;
  const streamTo = ctx.stream ? ctx.model!.provider.operations[name]?.streamOperation : null;
  return streamTo ?? name;
}

/**
 * Sends the upstream request with the attempt's key, signal and deadline (src/pipeline/attempts.ts); an
 * upstream error answer becomes the client's error, with nothing charged, as an AttemptError carrying
 * its status and Retry-After for the retry policy.
 */
export async function sendUpstream(ctx: RequestContext, runtime: Runtime): Promise<UpstreamResponse> {
  const { provider, offering } = ctx.model!;
  const attempt = ctx.routing?.current ?? null;
  let response: UpstreamResponse;
  const operation = sentOperation(ctx);
  try {
    const target = {
      pathParams: pathParamsOf(ctx, operation), query: ctx.translation!.upstreamQuery, features: ctx.features, key: attempt?.key, headersTimeoutMs: attempt?.headersTimeoutMs,
      traceHeaders: attempt?.trace?.headers, stream: ctx.stream,
    };
    response = await runtime.upstream.send(provider, operation, ctx.translation!.upstreamBody, attempt?.signal ?? ctx.work, target);
  } catch (error) {
    if (!ctx.work.aborted) runtime.metrics?.upstreamError(provider.id, error instanceof GatewayError ? error.code : 'transport');
    throw error;
  }
  ctx.upstreamStatus = response.status;
  if (attempt) attempt.answeredAt = performance.now();
  if (response.status < 400) return response;
  runtime.metrics?.upstreamError(provider.id, response.status);
  const body = await readJsonBody(response).catch(() => null);
  const error = ctx.translation!.translator.error(response.status, body, response.headers);
  throw new AttemptError('status', error, response.status, retryAfterMs(response.headers));
}

/**
 * The JSON (or file) path: a client that left before the answer was written pays nothing, unless the
 * request outlives it (`ctx.work`: a claimed operation id, whose result is billed and kept).
 */
export async function forwardJson(ctx: RequestContext, runtime: Runtime): Promise<void> {
  ctx.outcome = NOTHING;
  let upstreamBody: unknown;
  let headers: Record<string, string> = {};
  let outputs: GeneratedOutput[] | undefined;
  try {
    const response = await sendUpstream(ctx, runtime);
    const { poll, binary } = ctx.model!.provider.operations[ctx.upstream!.choice.operation]!;
    if (binary) {
      // Issue 9 point 3: streamed through when the bill is known from the headers, else buffered.
      if (streamsThrough(ctx)) return await streamBinary(ctx, runtime, response, binary.maxBytes);
      const data = await readBounded(response, binary.maxBytes);
      if (!ctx.work.aborted) answerWithFile(ctx, data, response.headers);
      return;
    }
    // A plain-text 200 (spec 4.8: a transcription asked for as text, srt or vtt) goes to the translator that reads one.
    const translator = ctx.translation!.translator;
    if (!poll && translator.textResponse && !isJson(response.headers)) {
      const text = await response.body.text();
      if (ctx.work.aborted) return;
      answer(ctx, translator.textResponse(text, answerModelId(ctx.model!.offering, ctx.routing?.clientBody.model), response.headers), null, response.headers);
      return;
    }
    const start = poll ? await jobStart(poll, response) : { body: await readJsonBody(response), headers: response.headers };
    if ('location' in start) {
      ({ body: upstreamBody, headers } = await pollJob(runtime.upstream, ctx.model!.provider, poll!, start.location, start.headers, ctx.work));
      // A finished job that names its output by URL: downloaded, measured and kept (spec 4.14 flex images).
      if (poll!.output && !ctx.work.aborted) outputs = [await fetchOutput(ctx, runtime, poll!.output, upstreamBody)];
    } else {
      ({ body: upstreamBody, headers } = start);
    }
  } catch (error) {
    if (ctx.work.aborted) return;
    throw error instanceof GatewayError ? error : transportError(error);
  }
  if (ctx.work.aborted) return;
  if (!upstreamBody || typeof upstreamBody !== 'object') throw new GatewayError('upstream_error', 'The upstream provider sent a malformed answer.');
  answer(ctx, ctx.translation!.translator.response(upstreamBody as Record<string, unknown>, answerModelId(ctx.model!.offering, ctx.routing?.clientBody.model), headers, outputs), upstreamBody, headers);
}

/** True when an upstream answer says it is JSON (or says nothing, as some vendors' answers do). */
function isJson(headers: Readonly<Record<string, string>>): boolean {
  const type = headers['content-type'];
  return type === undefined || /^application\/([a-z0-9.+-]*\+)?json\b/i.test(type);
}

/** Records a translated answer for the meter stage and sends it (JSON, or its plain text) once settled. */
function answer(ctx: RequestContext, translated: TranslatedAnswer, upstreamBody: unknown, headers: Record<string, string>): void {
  const { body, usage, outputText, quantities = {}, text } = translated;
  // What a quantity meter may read: the upstream answer and headers, and the client answer.
  ctx.outcome = { delivery: 'full', reported: usage, deliveredText: outputText, answer: { upstreamBody, headers, clientBody: body, quantities } };
  ctx.finish = async () => {
    ctx.started = true;
    // An operation that outlived its client is billed and kept; there is nobody to answer.
    if (ctx.clientGone.aborted) return;
    if (text) await ctx.reply.code(200).header('content-type', text.contentType).send(text.data);
    else await ctx.reply.code(200).header('content-type', 'application/json; charset=utf-8').send(withUsageCost(ctx, body));
  };
}
