/** The Stage contract: compiled once per route at boot or reload; null means the stage is absent. */
import type { CompiledRoute } from '../config/types.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Limiter } from '../limits/types.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { AuthCache } from './auth-cache.js';
import type { StageHandler } from './context.js';

/** Long-lived services the stages use; shared by every configuration generation. */
export interface Runtime {
  ledger: Ledger;
  limiter: Limiter;
  /** Optional metrics sink (absent in unit tests). */
  metrics?: { limiterRejected(scope: string, limit: string): void };
  upstream: UpstreamClient;
  auth: AuthCache;
}

/** One of the six fixed stages. */
export interface Stage {
  readonly name: 'auth' | 'validate' | 'rate-limit' | 'translate' | 'forward' | 'meter';
  compile(route: CompiledRoute, runtime: Runtime): StageHandler | null;
}
