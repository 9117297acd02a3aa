/**
 * The video job poller (issue 11 item 5; spec 3 "Video job", 4.16): a background job run on one
 * replica at a time (src/jobs). Each due job's status is read from the vendor; a running job keeps its
 * hold alive; a failed one is recorded and its hold released (nothing charged, spec 1); a completed
 * one has its video downloaded into temporary private storage, measured, and billed per second
 * actually produced (the measured duration rounded up to whole seconds, never more than was asked).
 *
 * The job's hold is moved only through src/pipeline/hold.ts (keepJobHold, settleJobHold, releaseJobHold),
 * where a hold's whole life is written down.
 *
 * Crash safety: every step repeats safely. A job is moved to completed only after its bill is
 * settled, and a second settle of one hold charges nothing, so a poller killed anywhere in between
 * finishes the job on its next run and bills it once.
 */
import type { Clock } from '../clock.js';
import type { CompiledGateway, CompiledOffering, CompiledProvider, CompiledRoute } from '../config/types.js';
import type { Outputs } from '../files/outputs.js';
import { mp4DurationSeconds, mp4IsWhole } from '../files/verify/mp4-duration.js';
import type { Ledger } from '../ledger/ledger.js';
import type { UsageRowInput } from '../ledger/types.js';
import { quantityCharge } from '../meters/quantity-meter.js';
import { keepJobHold, releaseJobHold, settleJobHold } from '../pipeline/hold.js';
import type { Db } from '../store/types.js';
import { createTranslator } from '../translate/registry.js';
import type { JobStatus } from '../translate/types.js';
import { readBounded } from '../upstream/body.js';
import type { UpstreamClient } from '../upstream/client.js';
import { dueVideoJobs, markCompleted, markFailed, markRunning, type VideoJob } from './records.js';

/** What the poller needs; `gateway` is read per run (hot reload may replace it). */
export interface PollerDeps { db: Db; ledger: Ledger; upstream: UpstreamClient; outputs: Outputs; clock: Clock; gateway: () => CompiledGateway }

/** What one run did, for the job log and POST /admin/jobs/video-jobs/run. */
export interface PollReport { polled: number; completed: number; failed: number; errors: number }

/** Jobs read per run, and the pause between two polls of one running job. */
const BATCH = 50;
const POLL_EVERY_MS = 5_000;

/** The job route and the things a job needs from the current configuration; null when they are gone. */
interface JobContext { route: CompiledRoute; provider: CompiledProvider; offering: CompiledOffering; pollOp: string; outputOp: string }

function contextOf(gateway: CompiledGateway, job: VideoJob): JobContext | null {
  const route = gateway.routes.find((r) => r.manifest.job?.kind === 'video');
  const provider = gateway.providers.get(job.providerId);
  const offering = gateway.offerings.get(job.offeringId);
  const pollOp = route?.manifest.job?.poll_operation;
  const outputOp = route?.manifest.job?.output_operation;
  if (!route || !provider || !offering || !pollOp || !outputOp || !provider.operations[pollOp] || !provider.operations[outputOp]) return null;
  return { route, provider, offering, pollOp, outputOp };
}

/** Polls every due job once; a job whose poll fails stays due and is tried on the next run. */
export async function pollVideoJobs(deps: PollerDeps): Promise<PollReport> {
  const report: PollReport = { polled: 0, completed: 0, failed: 0, errors: 0 };
  const jobs = await dueVideoJobs(deps.db, deps.clock.now(), BATCH);
  for (const job of jobs) {
    report.polled += 1;
    try {
      const outcome = await pollOne(deps, job);
      if (outcome === 'completed') report.completed += 1;
      if (outcome === 'failed') report.failed += 1;
    } catch {
      report.errors += 1;
      await markRunning(deps.db, job.id, job.state === 'queued' ? 'queued' : 'in_progress', job.progress, new Date(deps.clock.now().getTime() + POLL_EVERY_MS));
    }
  }
  return report;
}

async function fail(deps: PollerDeps, job: VideoJob, error: { code: string; message: string }): Promise<'failed'> {
  await markFailed(deps.db, job.id, error, deps.clock.now());
  await releaseJobHold(deps.ledger, job);
  return 'failed';
}

async function pollOne(deps: PollerDeps, job: VideoJob): Promise<'running' | 'completed' | 'failed'> {
  const now = deps.clock.now();
  if (now >= job.deadlineAt) return fail(deps, job, { code: 'video_job_timeout', message: 'The video was not ready before the gateway\'s deadline; nothing was charged.' });
  const context = contextOf(deps.gateway(), job);
  if (!context) return fail(deps, job, { code: 'model_not_available', message: `The model "${job.offeringId}" is no longer served; nothing was charged.` });
  const translator = createTranslator(context.route.manifest.format, job.upstreamFormat, {}, job.offeringId);
  const signal = AbortSignal.timeout(context.provider.timeouts.headersMs + context.provider.timeouts.idleMs);
  const answer = await deps.upstream.send(context.provider, context.pollOp, null, signal, { pathParams: { video_id: job.vendorJobId } });
  const text = await answer.body.text();
  if (answer.status === 404) return fail(deps, job, { code: 'video_job_lost', message: 'The vendor no longer knows this job; nothing was charged.' });
  if (answer.status >= 400) throw new Error(`job status answered ${answer.status}`);
  const status = translator.job!(JSON.parse(text) as Record<string, unknown>);
  if (status.state === 'failed') return fail(deps, job, status.error!);
  if (status.state === 'completed') return complete(deps, job, context, status, signal);
  await markRunning(deps.db, job.id, status.state, status.progress, new Date(now.getTime() + POLL_EVERY_MS));
  // The hold lives as long as the job may (its deadline), plus the gateway's usual margin.
  await keepJobHold(deps.ledger, job, now, deps.gateway().settings.holdTtlMs);
  return 'running';
}

/**
 * Spec 4.16: billed per second of output actually produced: the measured duration (to the
 * millisecond, so container rounding such as 7.9999 s is 8 s) rounded up to whole seconds, and never
 * more than the job asked for (and reserved).
 */
export function billableSeconds(measured: number, requested: number): number {
  return Math.min(requested, Math.max(1, Math.ceil(Math.round(measured * 1000) / 1000)));
}

async function complete(deps: PollerDeps, job: VideoJob, c: JobContext, status: JobStatus, signal: AbortSignal): Promise<'completed'> {
  const download = await deps.upstream.send(c.provider, c.outputOp, null, signal, { pathParams: { video_id: job.vendorJobId } });
  if (download.status >= 400) { await download.body.dump(); throw new Error(`video download answered ${download.status}`); }
  const data = await readBounded(download, c.provider.operations[c.outputOp]!.binary?.maxBytes ?? 512 * 1024 * 1024);
  const contentType = (download.headers['content-type'] ?? 'video/mp4').split(';')[0]!.trim() || 'video/mp4';
  const measured = mp4DurationSeconds(data);
  // A download that is not a whole MP4 (cut short though its body ended cleanly, no readable movie
  // header, or not a video) is neither kept nor billed: the job stays due and the next run downloads
  // it again, until its deadline releases the hold (spec 4.16: billed by what the finished video measures).
  if (measured === null || !mp4IsWhole(data)) throw new Error('the video download is not a complete MP4');
  const seconds = billableSeconds(measured, job.requestedSeconds);
  const stored = await deps.outputs.store({ accountId: job.accountId, purpose: 'VIDEO_OUTPUT', contentType, data, origin: '' });
  const row: UsageRowInput = {
    requestId: job.requestId, keyId: job.keyId, model: job.offeringId, kind: c.route.manifest.id, unit: 'second',
    quantity: BigInt(seconds), amountNano: quantityCharge(BigInt(seconds), c.offering),
    details: { video_job_id: job.id, requested_seconds: job.requestedSeconds, measured_seconds: measured, vendor_seconds: status.seconds ?? null, ...(job.sourceJobId ? { remixed_from_video_id: job.sourceJobId } : {}) },
  };
  await settleJobHold(deps.ledger, job, [row]);
  await markCompleted(deps.db, job.id, { outputFileId: stored.id, billedSeconds: seconds, amountNano: row.amountNano, at: deps.clock.now() });
  return 'completed';
}
