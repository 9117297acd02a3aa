/** Forwards a non-streaming proxy request and answers the client with the translated JSON. */
import { GatewayError } from '../../errors.js';
import { transportError, type UpstreamResponse } from '../../upstream/client.js';
import type { RequestContext } from '../context.js';
import type { Runtime } from '../stage.js';

const NOTHING = { delivery: 'none', reported: null, deliveredText: '' } as const;

/** Reads an upstream body as JSON; null when it is not JSON (error bodies of proxies, HTML pages). */
export async function readJsonBody(response: UpstreamResponse): Promise<unknown> {
  const text = await response.body.text();
  try { return JSON.parse(text); } catch { return null; }
}

/** Sends the upstream request; an upstream error answer becomes the client's error, with nothing charged. */
export async function sendUpstream(ctx: RequestContext, runtime: Runtime): Promise<UpstreamResponse> {
  const { provider } = ctx.model!;
  let response: UpstreamResponse;
  try {
    response = await runtime.upstream.send(provider, ctx.upstream!.choice.operation, ctx.translation!.upstreamBody!, ctx.clientGone.signal);
  } catch (error) {
    if (!ctx.clientGone.signal.aborted) runtime.metrics?.upstreamError(provider.id, error instanceof GatewayError ? error.code : 'transport');
    throw error;
  }
  if (response.status < 400) return response;
  runtime.metrics?.upstreamError(provider.id, response.status);
  const body = await readJsonBody(response).catch(() => null);
  throw ctx.translation!.translator.error(response.status, body, response.headers);
}

/** The JSON path: a client that left before the answer was written pays nothing. */
export async function forwardJson(ctx: RequestContext, runtime: Runtime): Promise<void> {
  ctx.outcome = NOTHING;
  let upstreamBody: unknown;
  try {
    const response = await sendUpstream(ctx, runtime);
    upstreamBody = await readJsonBody(response);
  } catch (error) {
    if (ctx.clientGone.signal.aborted) return;
    throw error instanceof GatewayError ? error : transportError(error);
  }
  if (ctx.clientGone.signal.aborted) return;
  if (!upstreamBody || typeof upstreamBody !== 'object') throw new GatewayError('upstream_error', 'The upstream provider sent a malformed answer.');
  const { body, usage, outputText } = ctx.translation!.translator.response(upstreamBody as Record<string, unknown>, ctx.model!.offering.id);
  ctx.outcome = { delivery: 'full', reported: usage, deliveredText: outputText };
  ctx.finish = async () => {
    ctx.started = true;
    await ctx.reply.code(200).header('content-type', 'application/json; charset=utf-8').send(body);
  };
}
