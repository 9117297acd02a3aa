/**
 * Chooses the deployment an attempt goes to (issue 29 item 5): among the deployments not yet ruled
 * out for this request, the lowest priority that has an available one (circuit closed, or half-open
 * with no probe in flight), and within it by the offering's strategy: `weighted` (weighted random),
 * `least_inflight`, or `latency` (the lowest EWMA of time to first byte; one never measured first).
 * When no deployment of any offering the request may reach is available, the attempt loop tries the
 * least recently opened one (`leastRecentlyOpened`): a request is never refused only because circuits
 * are open, and a fallback that is healthy is preferred to a primary whose circuits are all open.
 */
import type { CompiledDeployment, RoutingPolicy } from '../config/types.js';
import type { DeploymentHealth } from './health.js';

/** A random number in [0, 1); injected by tests. */
export type Random = () => number;

function weighted(candidates: readonly CompiledDeployment[], random: Random): CompiledDeployment {
  let total = 0;
  for (const d of candidates) total += d.weight;
  let point = random() * total;
  for (const d of candidates) {
    point -= d.weight;
    if (point < 0) return d;
  }
  return candidates[candidates.length - 1]!;
}

/** The candidates with the lowest `score`, ties shared by weight. */
function lowest(candidates: readonly CompiledDeployment[], score: (d: CompiledDeployment) => number, random: Random): CompiledDeployment {
  let best = Infinity;
  let ties: CompiledDeployment[] = [];
  for (const d of candidates) {
    const s = score(d);
    if (s < best) { best = s; ties = [d]; } else if (s === best) ties.push(d);
  }
  return ties.length === 1 ? ties[0]! : weighted(ties, random);
}

function byStrategy(candidates: readonly CompiledDeployment[], policy: RoutingPolicy, health: DeploymentHealth, random: Random): CompiledDeployment {
  if (candidates.length === 1) return candidates[0]!;
  if (policy.strategy === 'least_inflight') return lowest(candidates, (d) => health.inflight(d), random);
  if (policy.strategy === 'latency') return lowest(candidates, (d) => health.latency(d) ?? -1, random);
  return weighted(candidates, random);
}

/** The available deployment for the next attempt among `deployments` minus `excluded`, or null when none is. */
export function chooseDeployment(
  deployments: readonly CompiledDeployment[], excluded: ReadonlySet<CompiledDeployment>, policy: RoutingPolicy,
  health: DeploymentHealth, random: Random = Math.random,
): CompiledDeployment | null {
  // The common case: one deployment, not yet ruled out, circuit closed.
  if (deployments.length === 1) {
    const only = deployments[0]!;
    return !excluded.has(only) && health.available(only, policy) ? only : null;
  }
  const open = deployments.filter((d) => !excluded.has(d));
  const priorities = [...new Set(open.map((d) => d.priority))].sort((a, b) => a - b);
  for (const priority of priorities) {
    const available = open.filter((d) => d.priority === priority && health.available(d, policy));
    if (available.length > 0) return byStrategy(available, policy, health, random);
  }
  return null;
}

/** Of `deployments` minus `excluded`, the one whose circuit opened longest ago (ties by weight), or null. */
export function leastRecentlyOpened(
  deployments: readonly CompiledDeployment[], excluded: ReadonlySet<CompiledDeployment>, health: DeploymentHealth, random: Random = Math.random,
): CompiledDeployment | null {
  const open = deployments.filter((d) => !excluded.has(d));
  return open.length === 0 ? null : lowest(open, (d) => health.openedAt(d) ?? 0, random);
}
