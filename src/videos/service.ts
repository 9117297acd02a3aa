/**
 * Video jobs (issue 11 item 5; spec 2, 3, 4.16): the request side. A generation or remix is a proxy
 * request that reserves like any other (the requested seconds at the offering's price), but the
 * vendor answers with a job: instead of settling, the request records the job, which takes over its
 * hold, and answers it. The poller (poller.ts) settles the hold with the seconds the vendor actually
 * produced, or releases it. GET /v1/videos/generations/{id} reads the job (local route).
 */
import type { Clock } from '../clock.js';
import type { GatewaySettings } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Outputs } from '../files/outputs.js';
import { findTempFile } from '../files/temp-records.js';
import { randomId } from '../ledger/ids.js';
import { formatUsd } from '../money.js';
import type { RequestContext } from '../pipeline/context.js';
import type { Db } from '../store/types.js';
import { findVideoJob, insertVideoJob, type VideoJob } from './records.js';

/** What the service needs. */
export interface VideoJobsDeps { db: Db; clock: Clock; outputs: Outputs; settings: () => GatewaySettings }

/** Fields a remix may not carry: it inherits the source's size and duration (spec 4.16). */
const NOT_WITH_REMIX = ['image', 'file_id', 'size', 'seconds'] as const;

/** The first poll waits this long: no video is ready sooner. */
const FIRST_POLL_MS = 2_000;

/** The request side of video jobs. */
export class VideoJobs {
  /** The remix source of a request in flight (the body then names the vendor's id, for the upstream path). */
  private readonly sources = new WeakMap<RequestContext, VideoJob>();

  constructor(private readonly deps: VideoJobsDeps) {}

  /**
   * Before anything is resolved or reserved: the exclusion rules of spec 4.16, and a remix's source
   * (a completed job of the same account) whose size and duration it inherits.
   */
  async prepare(ctx: RequestContext): Promise<void> {
    const sourceId = ctx.body.remix_video_id;
    if (sourceId === undefined) return;
    for (const field of NOT_WITH_REMIX) {
      if (ctx.body[field] !== undefined) throw new GatewayError('invalid_request', `'${field}' cannot be combined with 'remix_video_id': a remix inherits the source video's size and duration.`, { param: field });
    }
    const source = typeof sourceId === 'string' ? await findVideoJob(this.deps.db, ctx.auth!.accountId, sourceId) : null;
    if (!source) throw new GatewayError('file_not_found', `No video job "${String(sourceId)}" exists for this account.`, { param: 'remix_video_id' });
    if (source.state !== 'completed') {
      throw new GatewayError('invalid_request', `The video job "${source.id}" is ${source.state.replace('_', ' ')}; only a completed video can be remixed.`, { param: 'remix_video_id' });
    }
    this.sources.set(ctx, source);
    // The source video lives at the vendor that made it (issue 29 item 8): the remix goes there.
    ctx.pinnedProvider = source.providerId;
    ctx.body = { ...ctx.body, remix_video_id: source.vendorJobId, seconds: source.billedSeconds ?? source.requestedSeconds, size: source.size };
  }

  /**
   * After the vendor accepted the job: records it with the request's hold and answers it. Recording
   * the job is the last step that can fail: once it resolves the meter stage hands the hold to the
   * job (src/pipeline/hold.ts handHoldToJob), and the request ends without settling or releasing it.
   */
  async start(ctx: RequestContext): Promise<void> {
    const translator = ctx.translation!.translator;
    const upstream = ctx.outcome?.answer?.upstreamBody;
    if (!translator.job || !upstream || typeof upstream !== 'object') throw new GatewayError('internal_error', 'The job route has no job to record.');
    const status = translator.job(upstream as Record<string, unknown>);
    const now = this.deps.clock.now();
    const job: VideoJob = {
      id: randomId('video_gw_'), accountId: ctx.auth!.accountId, keyId: ctx.auth!.keyId ?? null, requestId: ctx.requestId, holdId: ctx.hold!.id,
      offeringId: ctx.model!.offering.id, providerId: ctx.model!.provider.id, upstreamFormat: ctx.upstream!.format, vendorJobId: status.vendorId,
      sourceJobId: this.sources.get(ctx)?.id ?? null, requestedSeconds: Number(ctx.body.seconds), size: String(ctx.body.size),
      state: status.state === 'completed' || status.state === 'failed' ? 'in_progress' : status.state, progress: status.progress,
      errorCode: null, errorMessage: null, outputFileId: null, billedSeconds: null, amountNano: null,
      operationId: ctx.operationId ?? null, createdAt: now, nextPollAt: new Date(now.getTime() + FIRST_POLL_MS),
      deadlineAt: new Date(now.getTime() + this.deps.settings().videoJobs.deadlineMs), finishedAt: null,
    };
    const view = await this.view(job, '');
    await insertVideoJob(this.deps.db, job);
    ctx.operationResult = { video_job_id: job.id };
    ctx.finish = async () => {
      ctx.started = true;
      await ctx.reply.code(200).header('x-gateway-cost-usd', formatUsd(0n)).header('content-type', 'application/json; charset=utf-8').send(view);
    };
  }

  /** The job `id` of the account as the client sees it; 404 for no such job (or another account's). */
  async get(accountId: string, id: string, origin: string): Promise<{ view: Record<string, unknown>; job: VideoJob }> {
    const job = await findVideoJob(this.deps.db, accountId, id);
    if (!job) throw new GatewayError('file_not_found', `No video job "${id}" exists for this account.`, { param: 'id' });
    return { view: await this.view(job, origin), job };
  }

  /**
   * The client's view of a job: its status, and once completed the hosted video's URL and the bill.
   * `model` is the offering's id, also for a job started by an alias (issue 31 item 4): the job is
   * kept by the offering it bills, and every later read answers the same.
   */
  async view(job: VideoJob, origin: string): Promise<Record<string, unknown>> {
    const view: Record<string, unknown> = {
      id: job.id, object: 'video', model: job.offeringId, status: job.state, progress: job.progress,
      seconds: job.requestedSeconds, size: job.size, created_at: Math.floor(job.createdAt.getTime() / 1000),
      completed_at: job.state === 'completed' && job.finishedAt ? Math.floor(job.finishedAt.getTime() / 1000) : null,
      remixed_from_video_id: job.sourceJobId, video_url: null, expires_at: null,
      error: job.state === 'failed' ? { code: job.errorCode, message: job.errorMessage } : null, usage: null,
    };
    if (job.state !== 'completed' || !job.outputFileId) return view;
    view.usage = { seconds: job.billedSeconds, cost_usd: formatUsd(job.amountNano ?? 0n) };
    const record = await findTempFile(this.deps.db, job.outputFileId);
    if (record?.state === 'finalized' && record.expiresAt > this.deps.clock.now()) {
      const output = await this.deps.outputs.describe(record, origin);
      view.video_url = output.url;
      view.expires_at = Math.floor(output.expiresAt.getTime() / 1000);
    }
    return view;
  }
}
