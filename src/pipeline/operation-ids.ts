/**
 * Operation ids of images and video (issue 11 item 6; spec 4.14, 4.16, 7): `X-Gateway-Operation-ID`,
 * optional unless the operator turns on the planned mode (`operation_ids.required`). Claimed with one
 * insert by admission, first, before the limits and the reserve (`operationClaim` below; the table and
 * rules of src/skills/operations.ts; ids are single-use per account across every kind).
 * A skills execution's id (spec 4.6) is claimed at the same point, by its own rules (src/skills/execution.ts).
 *
 * Optional mode: a reuse of an id whose operation completed answers the same result again (the same
 * video job, the same image answer), charged nothing (`X-Gateway-Operation-Replayed: true`); one still
 * running is waited for (issue 31 item 9: one vendor call, one charge), then answered the same way; one
 * that failed (nothing was charged) runs again. A request with a claimed id outlives its client once
 * dispatched (`ctx.work`): the operation finishes, is billed and kept, so that the retry of a client
 * that went away gets it. Required mode: an id is mandatory, and any reuse of a submitted id is 409
 * operation_id_reused.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Cancellation } from '../cancel.js';
import type { Clock } from '../clock.js';
import type { CompiledRoute } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { Outputs } from '../files/outputs.js';
import { findTempFile } from '../files/temp-records.js';
import { readAll } from '../files/bytes.js';
import type { PublishDeps } from '../files/generated.js';
import { claimSkillsExecution } from '../skills/execution.js';
import { finishOperation, releaseOperation } from '../skills/operations.js';
import { OPERATION_HEADER, OPERATION_ID } from '../skills/rules.js';
import type { Db } from '../store/types.js';
import type { VideoJobs } from '../videos/service.js';
import type { RequestContext } from './context.js';
import { requestOrigin } from './origin.js';
import type { FileServices } from '../files/index.js';

/** The kinds of media operation a route may declare (`operation_ids:` in its manifest). */
export type MediaKind = 'image' | 'video';

/** What the service needs. */
export interface MediaOperationsDeps { db: Db; clock: Clock; files: FileServices; outputs: Outputs; videos: VideoJobs; required: () => boolean }

interface Existing { state: string; kind: string; result: Record<string, unknown> | string | null }

/** How often a reuse looks whether the running operation has ended. */
const RUNNING_POLL_MS = 250;
/** Beyond the offering's routing deadline, what a running operation may still take (a polled job's own deadline). */
const POLL_ALLOWANCE_MS = 60_000;

/** Claims, finishes and replays media operation ids. */
export class MediaOperations {
  constructor(private readonly deps: MediaOperationsDeps) {}

  /** Claims the request's id (if any): on success the request runs; on a completed reuse it is answered here. */
  async claim(ctx: RequestContext, kind: MediaKind): Promise<void> {
    const raw = ctx.req.headers[OPERATION_HEADER];
    if (raw === undefined) {
      if (this.deps.required()) throw new GatewayError('operation_id_required', 'This gateway requires the header X-Gateway-Operation-ID: a fresh id (1 to 200 visible ASCII characters) for each generation.');
      return;
    }
    const id = typeof raw === 'string' ? raw.trim() : '';
    if (!OPERATION_ID.test(id)) throw new GatewayError('invalid_request', 'X-Gateway-Operation-ID must be 1 to 200 visible ASCII characters.', { param: OPERATION_HEADER });
    const accountId = ctx.auth!.accountId;
    for (let attempt = 0; attempt < 3; attempt++) {
      const claimed = await this.deps.db.query(
        `INSERT INTO operations (account_id, operation_id, kind, request_id, state, created_at) VALUES ($1, $2, $3, $4, 'pending', $5)
         ON CONFLICT (account_id, operation_id) DO NOTHING RETURNING operation_id`, [accountId, id, kind, ctx.requestId, this.deps.clock.now()]);
      if (claimed.length === 1) { this.follow(ctx, id); return; }
      const existing = await this.settledOperation(ctx, id);
      if (!existing) continue;
      if (await this.reuse(ctx, id, kind, existing)) return;
    }
    throw new GatewayError('operation_in_progress', 'This X-Gateway-Operation-ID is being claimed by another request; retry shortly.', { headers: { 'retry-after': '1' } });
  }

  /**
   * The operation holding the id, once it is no longer running (optional mode): a running one is
   * waited for, up to the offering's routing deadline and a poll allowance, while this client stays.
   * Null when the id is free again (its failed first request gave it back).
   */
  private async settledOperation(ctx: RequestContext, id: string): Promise<Existing | null> {
    const until = performance.now() + (ctx.model?.offering.routing.deadlineMs ?? 0) + POLL_ALLOWANCE_MS;
    for (;;) {
      const [existing] = await this.deps.db.query<Existing>('SELECT state, kind, result FROM operations WHERE account_id = $1 AND operation_id = $2', [ctx.auth!.accountId, id]);
      if (!existing || existing.state !== 'pending' || this.deps.required() || performance.now() >= until || ctx.clientGone.aborted) return existing ?? null;
      await sleep(RUNNING_POLL_MS);
    }
  }

  /** Decides a reuse: true when it was answered (replayed), false to claim again; otherwise throws. */
  private async reuse(ctx: RequestContext, id: string, kind: MediaKind, existing: Existing): Promise<boolean> {
    const result = typeof existing.result === 'string' ? JSON.parse(existing.result) as Record<string, unknown> : existing.result;
    if (this.deps.required() || existing.kind !== kind) {
      const named = typeof result?.video_job_id === 'string' ? ` (video job ${result.video_job_id})` : '';
      throw new GatewayError('operation_id_reused', `This X-Gateway-Operation-ID was already submitted${named}; send a fresh id for a new ${kind === 'video' ? 'video' : 'image'}.`, { headers: { 'x-should-retry': 'false' } });
    }
    if (existing.state === 'pending') throw new GatewayError('operation_in_progress', 'The operation with this X-Gateway-Operation-ID is still running; retry shortly for its result.', { headers: { 'retry-after': '1' } });
    if (existing.state === 'completed' && result) { await this.replay(ctx, result); return true; }
    // Failed: nothing was charged, so the id may run again (the old record goes; a race re-claims once).
    await this.deps.db.query(`DELETE FROM operations WHERE account_id = $1 AND operation_id = $2 AND state = 'failed'`, [ctx.auth!.accountId, id]);
    return false;
  }

  /** Ends the claim with the request: completed with its result once billed (or its job recorded), else given back. */
  private follow(ctx: RequestContext, id: string): void {
    const accountId = ctx.auth!.accountId;
    const end = (state: 'completed' | 'failed', result: unknown = null) => finishOperation(this.deps.db, accountId, id, state, this.deps.clock.now(), result);
    ctx.operationId = id;
    // Once dispatched, the operation outlives its client (the vendor charges for it either way); a
    // client that leaves before dispatch stops it there, and the id is given back.
    const work = new Cancellation();
    ctx.work = work;
    ctx.clientGone.addEventListener('abort', () => { if (ctx.outcome === null) work.abort(ctx.clientGone.reason); });
    ctx.beforeAnswer.push(async () => {
      if (ctx.operationResult) return end('completed', ctx.operationResult);
      const body = ctx.outcome?.answer?.clientBody;
      if (!ctx.hold?.settled || body === undefined || body === null) return end('failed');
      const stored = await this.deps.outputs.store({ accountId, purpose: 'IMAGE_OUTPUT', contentType: 'application/json', data: Buffer.from(JSON.stringify(body)), origin: '' });
      return end('completed', { answer_file_id: stored.id, cost_usd: ctx.reply.getHeader('x-gateway-cost-usd') ?? null });
    });
    ctx.onFailure.push(async (error) => {
      // Nothing was charged either way: refused before dispatch, the id is given back; after, it may run again.
      if (ctx.outcome === null) await releaseOperation(this.deps.db, accountId, id, ctx.requestId);
      else await end('failed');
      return error;
    });
  }

  /** Answers a completed operation's result again, charging nothing. */
  private async replay(ctx: RequestContext, result: Record<string, unknown>): Promise<void> {
    let body: unknown;
    if (typeof result.video_job_id === 'string') {
      body = (await this.deps.videos.get(ctx.auth!.accountId, result.video_job_id, requestOrigin(ctx, this.deps.files))).view;
    } else {
      const record = typeof result.answer_file_id === 'string' ? await findTempFile(this.deps.db, result.answer_file_id) : null;
      const stream = record?.state === 'finalized' && record.expiresAt > this.deps.clock.now() ? await this.deps.files.blobs.read(record.blobKey) : null;
      if (!record || !stream) throw new GatewayError('operation_id_reused', 'This X-Gateway-Operation-ID completed and its stored result has expired; send a fresh id.', { headers: { 'x-should-retry': 'false' } });
      body = JSON.parse((await readAll(stream, record.actualBytes ?? record.declaredBytes)).toString('utf8'));
    }
    ctx.answered = true;
    ctx.finish = async () => {
      ctx.started = true;
      await ctx.reply.code(200).header('x-gateway-operation-replayed', 'true').header('x-gateway-cost-usd', '0')
        .header('content-type', 'application/json; charset=utf-8').send(body);
    };
  }
}

/** What the claims use, of the gateway's runtime (either may be absent in unit tests that need none). */
export interface ClaimServices { operations?: MediaOperations; files?: FileServices }

/** What a skills execution's claim and publication need, or the 400 of a gateway built without them. */
export function skillsServices(files: FileServices | undefined): PublishDeps {
  const deps = files?.publish;
  if (!deps) throw new GatewayError('invalid_request', 'Skills executions are not available on this gateway.');
  return deps;
}

/**
 * The operation-id claim of a route, or null when it claims none: admission runs it before the limits
 * and the reserve (DESIGN.md "Idempotency"). Media routes (`operation_ids`) claim the header's id;
 * the messages route (`skills_execution`) the id of a skills execution the route stage checked.
 * A request refused after the claim and before dispatch (402, 429, a store outage) gives it back.
 */
export function operationClaim(route: CompiledRoute, services: ClaimServices): ((ctx: RequestContext) => Promise<void>) | null {
  const kind = route.manifest.operation_ids;
  if (kind) {
    return async (ctx) => {
      if (!services.operations) throw new GatewayError('upstream_unavailable', 'Operation ids are not available on this gateway.');
      await services.operations.claim(ctx, kind);
    };
  }
  if (route.manifest.skills_execution) return (ctx) => claimSkillsExecution(ctx, skillsServices(services.files));
  return null;
}
