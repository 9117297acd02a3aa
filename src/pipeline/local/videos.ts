/** GET /v1/videos/generations/{id}: a video job of the caller's account (spec 4.16), answered by the gateway. */
import { GatewayError } from '../../errors.js';
import { formatUsd } from '../../money.js';
import type { VideoJobs } from '../../videos/service.js';
import type { RequestContext } from '../context.js';
import type { Runtime } from '../stage.js';
import { fileServices, requestOrigin } from './temp-files.js';

/** The video job service, or a 503-class error on a gateway built without one. */
export function videoJobs(runtime: Runtime): VideoJobs {
  if (!runtime.videos) throw new GatewayError('upstream_unavailable', 'Video jobs are not available on this gateway.');
  return runtime.videos;
}

/** Answers the job: its status, and once completed the hosted video's URL and the settled charge. */
export async function getVideoJob(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const { view, job } = await videoJobs(runtime).get(ctx.auth!.accountId, ctx.params.id ?? '', requestOrigin(ctx, fileServices(runtime)));
  // The settled charge of a media route (issue 11 "Names"): known once the job completed, 0 before.
  ctx.reply.header('x-gateway-cost-usd', formatUsd(job.state === 'completed' ? job.amountNano ?? 0n : 0n));
  await ctx.reply.code(200).header('content-type', 'application/json; charset=utf-8').send(view);
}
