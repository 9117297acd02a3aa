/**
 * Video job records (migration 008; spec 2 "Video job", 3): every statement that reads or moves one,
 * each guarded by the state it expects, so a poller that restarts after a crash moves a job once.
 */
import type { Queryable } from '../store/types.js';

/** One video job. */
export interface VideoJob {
  id: string;
  accountId: string;
  keyId: string | null;
  requestId: string;
  holdId: string;
  offeringId: string;
  providerId: string;
  upstreamFormat: string;
  vendorJobId: string;
  sourceJobId: string | null;
  requestedSeconds: number;
  size: string;
  state: 'queued' | 'in_progress' | 'completed' | 'failed';
  progress: number;
  errorCode: string | null;
  errorMessage: string | null;
  outputFileId: string | null;
  billedSeconds: number | null;
  amountNano: bigint | null;
  operationId: string | null;
  createdAt: Date;
  nextPollAt: Date;
  deadlineAt: Date;
  finishedAt: Date | null;
}

interface Row {
  id: string; account_id: string; key_id: string | null; request_id: string; hold_id: string; offering_id: string; provider_id: string;
  upstream_format: string; vendor_job_id: string; source_job_id: string | null; requested_seconds: number; size: string;
  state: VideoJob['state']; progress: number; error_code: string | null; error_message: string | null; output_file_id: string | null;
  billed_seconds: number | null; amount_nano: string | number | null; operation_id: string | null;
  created_at: Date | string; next_poll_at: Date | string; deadline_at: Date | string; finished_at: Date | string | null;
}

const COLUMNS = `id, account_id, key_id, request_id, hold_id, offering_id, provider_id, upstream_format, vendor_job_id, source_job_id,
  requested_seconds, size, state, progress, error_code, error_message, output_file_id, billed_seconds, amount_nano, operation_id,
  created_at, next_poll_at, deadline_at, finished_at`;

function toJob(r: Row): VideoJob {
  return {
    id: r.id, accountId: r.account_id, keyId: r.key_id, requestId: r.request_id, holdId: r.hold_id, offeringId: r.offering_id,
    providerId: r.provider_id, upstreamFormat: r.upstream_format, vendorJobId: r.vendor_job_id, sourceJobId: r.source_job_id,
    requestedSeconds: Number(r.requested_seconds), size: r.size, state: r.state, progress: Number(r.progress),
    errorCode: r.error_code, errorMessage: r.error_message, outputFileId: r.output_file_id,
    billedSeconds: r.billed_seconds === null ? null : Number(r.billed_seconds), amountNano: r.amount_nano === null ? null : BigInt(r.amount_nano),
    operationId: r.operation_id, createdAt: new Date(r.created_at), nextPollAt: new Date(r.next_poll_at), deadlineAt: new Date(r.deadline_at),
    finishedAt: r.finished_at === null ? null : new Date(r.finished_at),
  };
}

/** The shape of a video job id; anything else is no job (and never reaches SQL). */
export const VIDEO_JOB_ID = /^video_gw_[0-9a-f]{24}$/;

/** Records a job the vendor accepted. */
export async function insertVideoJob(db: Queryable, j: VideoJob): Promise<void> {
  await db.query(
    `INSERT INTO video_jobs (id, account_id, key_id, request_id, hold_id, offering_id, provider_id, upstream_format, vendor_job_id,
       source_job_id, requested_seconds, size, state, progress, operation_id, created_at, next_poll_at, deadline_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
    [j.id, j.accountId, j.keyId, j.requestId, j.holdId, j.offeringId, j.providerId, j.upstreamFormat, j.vendorJobId,
      j.sourceJobId, j.requestedSeconds, j.size, j.state, j.progress, j.operationId, j.createdAt, j.nextPollAt, j.deadlineAt]);
}

/** The job `id` of `accountId`, or null (another account's job is no job). */
export async function findVideoJob(db: Queryable, accountId: string, id: string): Promise<VideoJob | null> {
  if (!VIDEO_JOB_ID.test(id)) return null;
  const [row] = await db.query<Row>(`SELECT ${COLUMNS} FROM video_jobs WHERE id = $1 AND account_id = $2`, [id, accountId]);
  return row ? toJob(row) : null;
}

/** Live jobs whose next poll is at or before $1 (index video_jobs_live). */
const DUE_AT_1 = "state IN ('queued', 'in_progress') AND next_poll_at <= $1";

/** Running jobs due for a poll at `now`, oldest due first, at most `limit`. */
export async function dueVideoJobs(db: Queryable, now: Date, limit: number): Promise<VideoJob[]> {
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS} FROM video_jobs WHERE ${DUE_AT_1} ORDER BY next_poll_at LIMIT $2`, [now, limit]);
  return rows.map(toJob);
}

/** Whether any live job is due to be polled at `now` (the poller's cheap check before it takes its lock). */
export async function anyVideoJobDue(db: Queryable, now: Date): Promise<boolean> {
  const [row] = await db.query<{ due: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM video_jobs WHERE ${DUE_AT_1}) AS due`, [now]);
  return row?.due === true;
}

/** A running job's new status and its next poll. */
export async function markRunning(db: Queryable, id: string, state: 'queued' | 'in_progress', progress: number, nextPollAt: Date): Promise<void> {
  await db.query(
    `UPDATE video_jobs SET state = $2, progress = $3, next_poll_at = $4 WHERE id = $1 AND state IN ('queued', 'in_progress')`,
    [id, state, progress, nextPollAt]);
}

/** running -> completed, with its output and bill; false when it was no longer running. */
export async function markCompleted(db: Queryable, id: string, v: { outputFileId: string; billedSeconds: number; amountNano: bigint; at: Date }): Promise<boolean> {
  const rows = await db.query(
    `UPDATE video_jobs SET state = 'completed', progress = 100, output_file_id = $2, billed_seconds = $3, amount_nano = $4, finished_at = $5
     WHERE id = $1 AND state IN ('queued', 'in_progress') RETURNING id`,
    [id, v.outputFileId, v.billedSeconds, v.amountNano, v.at]);
  return rows.length === 1;
}

/** running -> failed, with why; false when it was no longer running. */
export async function markFailed(db: Queryable, id: string, error: { code: string; message: string }, at: Date): Promise<boolean> {
  const rows = await db.query(
    `UPDATE video_jobs SET state = 'failed', error_code = $2, error_message = $3, finished_at = $4
     WHERE id = $1 AND state IN ('queued', 'in_progress') RETURNING id`,
    [id, error.code, error.message, at]);
  return rows.length === 1;
}
