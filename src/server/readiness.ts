/**
 * GET /readyz (issue 8 item 4): whether this replica can serve right now. Each check has its own
 * `status`; the answer is 503 with `status: "unavailable"` while any of them is down, so a load
 * balancer stops sending traffic until the store and the limiter backend are back. No key needed.
 * GET /healthz stays a liveness probe: the process runs and answers.
 */
import type { DependencyCheck } from '../observability/availability.js';

/** The configuration as loaded: when, how much, and the last reload's result. */
export interface ConfigCheck {
  status: 'ok';
  loaded_at: string;
  routes: number;
  offerings: number;
  /** A refused reload leaves the previous configuration serving: ready, with the reason shown. */
  last_reload: { result: 'ok' | 'refused'; at: string; error?: string } | null;
}

/** The body of /readyz. */
export interface Readiness {
  status: 'ok' | 'unavailable';
  checks: { store: DependencyCheck; limiter: DependencyCheck; config: ConfigCheck };
}

/** What /readyz asks. */
export interface ReadinessProbes {
  store(): Promise<DependencyCheck>;
  limiter(): Promise<DependencyCheck>;
  config(): ConfigCheck;
}

/** How long one probe may take before it counts as unavailable. */
const PROBE_TIMEOUT_MS = 2_000;

async function bounded(target: string, probe: () => Promise<DependencyCheck>): Promise<DependencyCheck> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<DependencyCheck>((ok) => {
    timer = setTimeout(() => ok({ status: 'unavailable', target, error: `no answer within ${PROBE_TIMEOUT_MS} ms`, since: new Date().toISOString() }), PROBE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([probe().catch((e: unknown) => ({ status: 'unavailable' as const, target, error: String((e as Error)?.message ?? e), since: new Date().toISOString() })), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Runs every probe at once. */
export async function readiness(probes: ReadinessProbes, targets: { store: string; limiter: string }): Promise<Readiness> {
  const [store, limiter] = await Promise.all([bounded(targets.store, probes.store), bounded(targets.limiter, probes.limiter)]);
  const checks = { store, limiter, config: probes.config() };
  return { status: store.status === 'ok' && limiter.status === 'ok' ? 'ok' : 'unavailable', checks };
}
