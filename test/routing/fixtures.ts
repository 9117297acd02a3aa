/** Deployments and policies for the routing unit tests: just what select.ts and health.ts read. */
import type { CompiledDeployment, RoutingPolicy } from '../../src/config/types.js';
import { KeyPool } from '../../src/upstream/key-pool.js';

/** The gateway's default policy (issue 29 item 3), with overrides. */
export function policy(over: Partial<RoutingPolicy> = {}): RoutingPolicy {
  return {
    maxAttempts: 3, retrySameDeployment: 1, backoffMs: { initial: 250, max: 4000 }, retryAfterMaxMs: 5000, deadlineMs: 90_000,
    firstTokenTimeoutMs: null, streamIdleTimeoutMs: 30_000, strategy: 'weighted', circuit: { failures: 5, windowSeconds: 30, openSeconds: 30 }, ...over,
  };
}

/** A deployment with an id, a weight and a priority (its provider and offering are stand-ins). */
export function deployment(id: string, weight = 1, priority = 0): CompiledDeployment {
  const provider = { id: id.split('/')[0]!, keys: new KeyPool([]) } as unknown as CompiledDeployment['provider'];
  return { id, provider, offering: { upstreamModel: id.split('/')[1] ?? id } as CompiledDeployment['offering'], weight, priority };
}

/** A settable clock. */
export function clock(start = 1_000_000): { now: () => number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => { t += ms; } };
}
