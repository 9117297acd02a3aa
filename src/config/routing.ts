/**
 * The retry and fail-over policy (issue 29 item 3): `routing:` of gateway.config.yaml over the
 * defaults below, and an offering's own `routing:` over that, key by key (`backoff_ms` and `circuit`
 * sub-key by sub-key).
 */
import type { RoutingManifest } from '../generated/manifest-types.js';
import { ManifestError } from './errors.js';
import type { LineOf } from './load.js';
import type { RoutingPolicy } from './types.js';

/** The policy when gateway.config.yaml declares no `routing:` (issue 29 items 3 and 5). */
export const DEFAULT_ROUTING: RoutingPolicy = Object.freeze({
  maxAttempts: 3,
  retrySameDeployment: 1,
  backoffMs: Object.freeze({ initial: 250, max: 4000 }),
  retryAfterMaxMs: 5000,
  deadlineMs: 90_000,
  firstTokenTimeoutMs: null,
  streamIdleTimeoutMs: 30_000,
  strategy: 'weighted',
  circuit: Object.freeze({ failures: 5, windowSeconds: 30, openSeconds: 30 }),
});

/** Where a `routing:` block is, for its errors: the file, the block's JSON Pointer and the file's lines. */
export interface RoutingSource { file: string; pointer: string; lineOf: LineOf }

/**
 * `raw` (a manifest's `routing:`, every key optional) over `base`. A backoff whose `initial` exceeds
 * its `max` (after the merge) is refused: every wait would be capped to `max`, which is not what either says.
 */
export function compileRouting(raw: RoutingManifest | undefined, base: RoutingPolicy, source: RoutingSource): RoutingPolicy {
  if (!raw) return base;
  const policy: RoutingPolicy = {
    maxAttempts: raw.max_attempts ?? base.maxAttempts,
    retrySameDeployment: raw.retry_same_deployment ?? base.retrySameDeployment,
    backoffMs: { initial: raw.backoff_ms?.initial ?? base.backoffMs.initial, max: raw.backoff_ms?.max ?? base.backoffMs.max },
    retryAfterMaxMs: raw.retry_after_max_ms ?? base.retryAfterMaxMs,
    deadlineMs: raw.deadline_ms ?? base.deadlineMs,
    // null is a value here (off), so only an absent key inherits.
    firstTokenTimeoutMs: raw.first_token_timeout_ms === undefined ? base.firstTokenTimeoutMs : raw.first_token_timeout_ms,
    streamIdleTimeoutMs: raw.stream_idle_timeout_ms ?? base.streamIdleTimeoutMs,
    strategy: raw.strategy ?? base.strategy,
    circuit: {
      failures: raw.circuit?.failures ?? base.circuit.failures,
      windowSeconds: raw.circuit?.window_seconds ?? base.circuit.windowSeconds,
      openSeconds: raw.circuit?.open_seconds ?? base.circuit.openSeconds,
    },
  };
  if (policy.backoffMs.initial > policy.backoffMs.max) {
    const at = `${source.pointer}/backoff_ms`;
    throw new ManifestError(source.file, at, `backoff_ms.initial (${policy.backoffMs.initial}) is above backoff_ms.max (${policy.backoffMs.max})`, source.lineOf(at));
  }
  return policy;
}
