/**
 * A skills execution through /v1/messages (spec 4.6): as a step of the route stage, after the model is
 * chosen, every requirement is checked; admission then claims the operation id first, before the
 * limits and the reserve (src/pipeline/stages/admission.ts); after billing, the outputs are published
 * as `file_gw_` files and the container gets its `container_gw_` id; an uncertain outcome (the vendor
 * may have run it, the billing is not known to be right) answers `execution_recovery_required` and
 * blocks that operation for good.
 */
import type { Clock } from '../clock.js';
import { GatewayError } from '../errors.js';
import { publishGenerated, type PublishDeps } from '../files/generated.js';
import { randomId } from '../ledger/ids.js';
import type { RequestContext } from '../pipeline/context.js';
import { claimOperation, finishOperation, releaseOperation, type OperationEnd } from './operations.js';
import { checkSkillsExecution, isSkillsRequest, type SkillExecution } from './rules.js';

/** Spec 4.6 rule 2 and 8: five completed fresh containers per rolling 24 hours. */
const COMPLETED_PER_WINDOW = { max: 5, windowMs: 24 * 3600_000 };
const KIND = 'skills';

type Json = Record<string, unknown>;

/** Every `file_id` string in the answer's content (code execution outputs), in order, without repeats. */
export function outputFileIds(content: unknown): string[] {
  const ids = new Set<string>();
  const walk = (node: unknown, depth: number): void => {
    if (depth > 32 || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) { for (const n of node) walk(n, depth + 1); return; }
    for (const [key, value] of Object.entries(node)) {
      if (key === 'file_id' && typeof value === 'string') ids.add(value);
      else walk(value, depth + 1);
    }
  };
  walk(content, 0);
  return [...ids];
}

/** Replaces every `file_id` in the content by its published id. */
function rewriteFileIds(node: unknown, ids: ReadonlyMap<string, string>, depth = 0): void {
  if (depth > 32 || typeof node !== 'object' || node === null) return;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'file_id' && typeof value === 'string' && ids.has(value)) (node as Json)[key] = ids.get(value);
    else rewriteFileIds(value, ids, depth + 1);
  }
}

/** Whether a failure leaves the execution's outcome uncertain: sent, and no error answer from the vendor. */
function uncertain(ctx: RequestContext): boolean {
  const sent = ctx.outcome !== null;
  const refused = ctx.upstreamStatus !== null && ctx.upstreamStatus >= 400;
  return sent && !refused;
}

/** The checked executions of requests in flight, from the route step to admission's claim. */
const checked = new WeakMap<RequestContext, SkillExecution>();

/** The route step: checks a skills execution (400s before anything is claimed or reserved). */
export function prepareSkillsExecution(ctx: RequestContext): void {
  if (!isSkillsRequest(ctx.body)) return;
  const { offering, provider } = ctx.model!;
  const execution = checkSkillsExecution(ctx.body, ctx.req.headers, {
    modelId: offering.id, modelSkills: offering.skills, source: provider.skills?.source ?? null, builtins: provider.skills?.list ?? [],
    versionHeaders: ctx.route.requiredHeaders.flatMap((h) => [h.name, ...h.aliases]),
    betaHeader: ctx.format.betaHeader,
  });
  checked.set(ctx, execution);
  ctx.features.push('skills');
}

/** The admission step: claims a checked execution's operation id, and hooks its publication and its failure. */
export async function claimSkillsExecution(ctx: RequestContext, deps: PublishDeps & { clock: Clock }): Promise<void> {
  const execution = checked.get(ctx);
  if (!execution) return;
  const { provider } = ctx.model!;
  const accountId = ctx.auth!.accountId;
  await claimOperation(deps.db, {
    accountId, operationId: execution.operationId, kind: KIND, requestId: ctx.requestId, now: deps.clock.now(),
    maxCompleted: COMPLETED_PER_WINDOW.max, windowMs: COMPLETED_PER_WINDOW.windowMs,
  });
  const end = (state: OperationEnd, result: unknown = null) => finishOperation(deps.db, accountId, execution.operationId, state, deps.clock.now(), result);
  ctx.beforeAnswer.push(async () => {
    const answer = ctx.outcome?.answer?.clientBody as Json | undefined;
    // A client that left before the answer was not billed (the meter released the hold): nothing to publish.
    if (!answer || ctx.clientGone.aborted) { await end('failed'); return; }
    const container = answer.container as Json | undefined;
    const containerId = randomId('container_gw_');
    const published = new Map<string, string>();
    for (const vendorId of outputFileIds(answer.content)) {
      published.set(vendorId, (await publishGenerated(deps, accountId, provider, vendorId, containerId, ctx.clientGone.signal)).id);
    }
    rewriteFileIds(answer.content, published);
    const vendorContainer = container?.id;
    if (container) container.id = containerId;
    await end('completed', { container_id: containerId, vendor_container_id: vendorContainer ?? null, files: Object.fromEntries(published) });
  });
  ctx.onFailure.push(async (error) => {
    // Refused before dispatch: the id never ran, so it is given back (the client may retry it after a top-up).
    if (ctx.outcome === null) { await releaseOperation(deps.db, accountId, execution.operationId, ctx.requestId); return error; }
    if (!uncertain(ctx)) { await end('failed'); return error; }
    await end('recovery_required', { request_id: ctx.requestId, error: error instanceof GatewayError ? error.code : 'internal_error' });
    return new GatewayError('execution_recovery_required',
      `The skills execution's outcome is uncertain: do not retry or continue it, not even with a new operation id; contact support with request id ${ctx.requestId}.`,
      { headers: { 'x-should-retry': 'false' } });
  });
}
