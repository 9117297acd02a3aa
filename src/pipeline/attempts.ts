/**
 * The attempt loop (issue 29 items 2-5, 7): auth, validate, route and admission ran once; here a
 * deployment is chosen, the request prepared and translated for it, and forwarded, once per attempt,
 * until one answers or the policy says stop. What is retried, and how, is the table in
 * src/routing/classify.ts; which deployment, src/routing/select.ts; their health, src/routing/health.ts.
 * Money: the request holds one reservation sized for the dearest offering it may reach; a failed
 * attempt writes nothing, the attempt that answers is settled once by the meter stage. Nothing is
 * retried once content reached the client (a stream's frames wait until its first content).
 */
import { Cancellation } from '../cancel.js';
import type { CompiledDeployment, CompiledOffering, RoutingPolicy } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { classify, countsAgainstDeployment, outcomeLabel, type Decision } from '../routing/classify.js';
import { chooseDeployment, leastRecentlyOpened } from '../routing/select.js';
import { AttemptError } from '../upstream/attempt-error.js';
import type { PoolKey } from '../upstream/key-pool.js';
import type { AttemptOptions, RequestContext } from './context.js';
import { isPrepared, prepareDeployment, servingDeployments } from './deployment.js';
import { endRescue, prepareRescue } from './rescue.js';
import type { Runtime } from './stage.js';
import { endAttemptSpan, openAttemptSpan } from './trace.js';

/** One attempt's forward: JSON or stream (src/pipeline/forward/). */
export type Forward = (ctx: RequestContext, runtime: Runtime) => Promise<void>;

/** The response headers naming what served the request (issue 29 item 7). */
export const PROVIDER_HEADER = 'x-gateway-provider';
export const ATTEMPTS_HEADER = 'x-gateway-attempts';

/** Where the loop stands: the offerings it may still try, and what it ruled out. */
interface LoopState {
  policy: RoutingPolicy;
  deadline: number;
  chain: CompiledOffering[];
  link: number;
  excluded: Set<CompiledDeployment>;
  tries: Map<CompiledDeployment, number>;
  /** The deployment the next attempt must use (a retry on the same one), if any. */
  sticky: CompiledDeployment | null;
  /** Not before this time (a backoff or Retry-After), performance.now() ms. */
  notBefore: number;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: Cancellation): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = (): void => { clearTimeout(timer); signal.removeEventListener('abort', done); resolve(); };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/** Full-jitter backoff (AWS's "exponential backoff and jitter"): random in [0, min(max, initial * 2^n)). */
export function backoffMs(policy: RoutingPolicy, retry: number, random: () => number = Math.random): number {
  return Math.floor(random() * Math.min(policy.backoffMs.max, policy.backoffMs.initial * 2 ** retry));
}

/** The deployments of the offering at `link` that this request may use. */
function deploymentsAt(ctx: RequestContext, state: LoopState, link: number): readonly CompiledDeployment[] {
  return servingDeployments(state.chain[link]!, ctx.pinnedProvider);
}

/**
 * The next deployment: a retry's, else the first offering of the chain (from the current one)
 * with an available deployment, else the current offering's least recently opened (circuits all open).
 */
function nextDeployment(ctx: RequestContext, runtime: Runtime, state: LoopState): CompiledDeployment | null {
  // A retry goes to the same deployment, unless its circuit opened meanwhile (its failure may have opened it).
  if (state.sticky && runtime.deployments.state(state.sticky, state.sticky.offering.routing) !== 'open') return state.sticky;
  state.sticky = null;
  for (let link = state.link; link < state.chain.length; link++) {
    const policy = state.chain[link]!.routing;
    const chosen = chooseDeployment(deploymentsAt(ctx, state, link), state.excluded, policy, runtime.deployments);
    if (chosen) { state.link = link; return chosen; }
  }
  for (let link = state.link; link < state.chain.length; link++) {
    const chosen = leastRecentlyOpened(deploymentsAt(ctx, state, link), state.excluded, runtime.deployments);
    if (chosen) { state.link = link; return chosen; }
  }
  return null;
}

/** A key of the deployment's pool usable now, waiting for a resting one when it is back soon enough; undefined: none. */
async function keyFor(ctx: RequestContext, d: CompiledDeployment, state: LoopState): Promise<PoolKey | null | undefined> {
  const pool = d.provider.keys;
  if (pool.size === 0) return null;
  let key = pool.next();
  if (key) return key;
  const ready = pool.readyAt();
  if (ready === null) return undefined; // every key was taken out
  const wait = ready - Date.now();
  if (wait > state.policy.retryAfterMaxMs || performance.now() + wait >= state.deadline) return undefined;
  await pause(wait, ctx.work);
  key = pool.next();
  return key ?? undefined;
}

/** True when a source other than `d` is left to try after it (another deployment, or a later offering). */
function othersRemain(ctx: RequestContext, state: LoopState, d: CompiledDeployment): boolean {
  for (let link = state.link; link < state.chain.length; link++) {
    if (deploymentsAt(ctx, state, link).some((other) => other !== d && !state.excluded.has(other))) return true;
  }
  return false;
}

/**
 * Sets up one attempt's options: its key, its signal (the client's, and its own timer), its limits.
 * The answer's headers may take what is left of the deadline, or half of it when another source is
 * left to try: a silent upstream leaves the next one time to answer (issue 29 scenario S06).
 */
function startAttempt(ctx: RequestContext, policy: RoutingPolicy, key: PoolKey | null, deadline: number, shareDeadline: boolean): { options: AttemptOptions; stop: () => void } {
  const now = performance.now();
  const left = Math.max(1, deadline - now);
  const signal = new Cancellation();
  const forward = (): void => signal.abort(ctx.work.reason);
  ctx.work.addEventListener('abort', forward);
  const options: AttemptOptions = {
    key, signal, headersTimeoutMs: shareDeadline ? Math.ceil(left / 2) : left,
    idleTimeoutMs: policy.streamIdleTimeoutMs, startedAt: now, answeredAt: null, timedOut: null, contentStarted: false,
  };
  // A stream's first content must come within first_token_timeout_ms of the attempt's start (headers included).
  const timer = ctx.stream && policy.firstTokenTimeoutMs !== null ? setTimeout(() => {
    if (options.contentStarted) return;
    options.timedOut = 'first_token_timeout';
    signal.abort(new GatewayError('upstream_timeout', 'The upstream provider sent no content in time.'));
  }, policy.firstTokenTimeoutMs) : null;
  return { options, stop: () => { if (timer) clearTimeout(timer); ctx.work.removeEventListener('abort', forward); } };
}

/** The error an attempt ended with, as the loop classifies it: a timer of its own turns into its kind. */
function attemptFailure(options: AttemptOptions, error: unknown): unknown {
  if (options.timedOut && !(error instanceof AttemptError && error.failure === options.timedOut)) {
    return new AttemptError(options.timedOut, new GatewayError('upstream_timeout', 'The upstream provider did not answer in time.'));
  }
  return error;
}

/** Records an attempt for the headers, the access log and the metrics. */
function record(ctx: RequestContext, runtime: Runtime, d: CompiledDeployment, outcome: string, startedAt: number): void {
  ctx.routing!.attempts.push({ deployment: d.id, provider: d.provider.id, outcome, ms: Math.round((performance.now() - startedAt) * 10) / 10 });
  if (ctx.trace) endAttemptSpan(ctx, outcome);
  runtime.metrics?.upstreamAttempt?.(d.provider.id, d.id, outcome);
}

/** Applies a failed attempt's decision to the loop's state; false when the loop must stop with the error. */
function decide(ctx: RequestContext, runtime: Runtime, state: LoopState, d: CompiledDeployment, decision: Decision, error: unknown, key: PoolKey | null): boolean {
  state.sticky = null;
  const policy = state.policy;
  if (decision === 'final') return false;
  if (decision === 'context_fallback' || decision === 'content_fallback') {
    const plan = ctx.routing!.plan;
    const next = decision === 'context_fallback' ? plan.contextFallbacks : plan.contentFallbacks;
    if (next.length === 0 || state.chain === next) return false;
    state.chain = next;
    state.link = 0;
    return true;
  }
  if (decision === 'key') {
    // A refused access token is fetched anew (src/upstream/client.ts): the key file it came from stays.
    if (key && !d.provider.auth.tokens && d.provider.keys.remove(key)) runtime.logger?.warn({ provider: d.provider.id, key: key.location }, 'upstream key refused (401/403): taken out until the configuration is reloaded');
    if (!d.provider.keys.exhausted && d.provider.keys.size > 1) state.sticky = d; else state.excluded.add(d);
    return true;
  }
  if (decision === 'next') { state.excluded.add(d); return true; }
  // retry: the same deployment again, within retry_same_deployment, after Retry-After or a backoff.
  const tries = state.tries.get(d) ?? 1;
  const wait = (error instanceof AttemptError ? error.retryAfterMs : null) ?? backoffMs(policy, tries - 1);
  // A key answered 429 rests (its Retry-After, or the backoff): another key of the pool goes at once.
  const rateLimited = key !== null && error instanceof AttemptError && error.upstreamStatus === 429;
  if (rateLimited) {
    d.provider.keys.rest(key, Date.now() + wait);
    if (d.provider.keys.hasUsable()) { state.sticky = d; return true; }
  }
  if (tries > policy.retrySameDeployment || wait > policy.retryAfterMaxMs) { state.excluded.add(d); return true; }
  state.sticky = d;
  // A resting key is waited for by keyFor; anything else waits here.
  if (!rateLimited) state.notBefore = performance.now() + wait;
  return true;
}

/** Forwards the request, attempt after attempt, under the requested offering's routing policy. */
export async function forwardWithAttempts(ctx: RequestContext, runtime: Runtime, forward: Forward): Promise<void> {
  const routing = ctx.routing!;
  const offeringPolicy = routing.plan.chain[0]!.routing;
  const policy = routing.once ? { ...offeringPolicy, maxAttempts: 1 } : offeringPolicy;
  // The route stage prepared a deployment: the first attempt goes there unless its circuit opened since.
  const prepared = runtime.deployments.available(routing.deployment, policy) ? routing.deployment : null;
  const state: LoopState = {
    policy, deadline: routing.startedAt + policy.deadlineMs, chain: routing.plan.chain, link: 0,
    excluded: new Set(), tries: new Map(), sticky: prepared, notBefore: 0,
  };
  // The error the loop ends with when no attempt answers; built only then (an Error captures a stack
  // trace: made up front for every request, it was 2.7% of a streaming gateway's CPU).
  let last: unknown = null;
  for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
    const d = nextDeployment(ctx, runtime, state);
    if (!d) break;
    const key = await keyFor(ctx, d, state);
    // A continuation goes to the target it was prepared for, or not at all.
    if (key === undefined && routing.rescue) break;
    if (key === undefined) { state.excluded.add(d); state.sticky = null; attempt -= 1; continue; }
    await pause(state.notBefore - performance.now(), ctx.work);
    if (ctx.work.aborted) return;
    if (performance.now() >= state.deadline) break;
    if (!isPrepared(ctx, d)) {
      try { prepareDeployment(ctx, d, true); } catch (error) {
        // This source cannot take the request (a parameter its format cannot carry): the next one may.
        last = error; state.excluded.add(d); state.sticky = null; attempt -= 1; continue;
      }
    }
    state.tries.set(d, (state.tries.get(d) ?? 0) + 1);
    const { options, stop } = startAttempt(ctx, d.offering.routing, key, state.deadline, attempt < policy.maxAttempts && othersRemain(ctx, state, d));
    routing.current = options;
    // Traces on: a child span per attempt, its trace context sent upstream (issue 33 item 1).
    if (ctx.trace) openAttemptSpan(ctx, d, attempt);
    ctx.reply.header(PROVIDER_HEADER, d.provider.id).header(ATTEMPTS_HEADER, String(attempt));
    runtime.deployments.started(d, d.offering.routing);
    try {
      await forward(ctx, runtime);
      const broken = ctx.outcome?.delivery === 'partial';
      if (broken) runtime.deployments.failed(d, d.offering.routing); else runtime.deployments.succeeded(d, (options.answeredAt ?? performance.now()) - options.startedAt);
      if (ctx.work.aborted && !ctx.started) runtime.deployments.abandoned(d);
      record(ctx, runtime, d, broken || routing.cut ? 'cut' : ctx.work.aborted ? 'client_gone' : 'ok', options.startedAt);
      // Cut after content: continued on the next source that takes a prefill (issue 29 item 6), else ended with its error.
      if (routing.cut && !ctx.work.aborted && attempt < policy.maxAttempts) {
        state.excluded.add(d);
        state.sticky = null;
        const target = nextDeployment(ctx, runtime, state);
        if (prepareRescue(ctx, d, target)) { state.sticky = target; continue; }
      }
      return;
    } catch (caught) {
      const error = attemptFailure(options, caught);
      if (ctx.work.aborted) { runtime.deployments.abandoned(d); record(ctx, runtime, d, 'client_gone', options.startedAt); return; }
      // A continuation that failed before its content: the client's stream ends with the cut's own error.
      if (routing.rescue && ctx.started) {
        if (countsAgainstDeployment(classify(error))) runtime.deployments.failed(d, d.offering.routing); else runtime.deployments.abandoned(d);
        record(ctx, runtime, d, outcomeLabel(error), options.startedAt);
        endRescue(ctx);
        return;
      }
      const decision = ctx.started ? 'final' : classify(error);
      if (countsAgainstDeployment(decision)) runtime.deployments.failed(d, d.offering.routing); else runtime.deployments.abandoned(d);
      record(ctx, runtime, d, outcomeLabel(error), options.startedAt);
      last = error;
      if (!decide(ctx, runtime, state, d, decision, error, key)) throw error;
    } finally {
      stop();
      runtime.deployments.ended(d);
      if (options.trace) endAttemptSpan(ctx, 'unknown');
      routing.current = null;
    }
  }
  // Out of time before a continuation could start: the client's stream ends with the cut's error, what it got billed.
  if (routing.rescue && ctx.started) { endRescue(ctx); return; }
  throw last ?? new GatewayError('upstream_unavailable', 'No source of this model could take the request.');
}
