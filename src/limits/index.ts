/**
 * Picks the limiter backend: Redis when REDIS_URL is set (shared by replicas), else in memory. The
 * Redis client is imported only when it is used, so a single gateway does not carry it in memory.
 * A Redis backend is wrapped with the operator's outage policy (`limits.on_backend_error`).
 */
import { ManifestError } from '../config/errors.js';
import { Availability, withoutCredentials, type AvailabilityListener, type DependencyCheck } from '../observability/availability.js';
import { MemoryLimiter } from './memory.js';
import { ResilientLimiter, type BackendErrorPolicy } from './resilient.js';
import type { Limiter } from './types.js';

/** The limiter of this process, what it is, and its readiness check. */
export interface LimiterBackend {
  limiter: Limiter;
  /** For the start line: "in-memory" or "redis://host:port/db (fail_closed)", never a password. */
  describe: string;
  /** For /readyz: one round trip to the backend (always ok in memory). */
  check(): Promise<DependencyCheck>;
}

/** How the backend reports outages and fallbacks. */
export interface LimiterOptions {
  policy: BackendErrorPolicy;
  /** Called once when the backend goes down and once when it is back. */
  onAvailabilityChange?: AvailabilityListener;
  /** Called for each request admitted on in-memory limits during an outage (fail_open). */
  onFallback?: () => void;
}

function checkRedisUrl(url: string): void {
  let parsed: URL;
  try { parsed = new URL(url); } catch { throw new ManifestError('env REDIS_URL', '', 'is not a URL (expected redis://host:port/db or rediss://...)'); }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new ManifestError('env REDIS_URL', '', `has protocol ${parsed.protocol} (expected redis: or rediss:)`);
  }
}

/** The limiter for this process. */
export async function createLimiter(env: NodeJS.ProcessEnv, opts: LimiterOptions = { policy: 'fail_closed' }): Promise<LimiterBackend> {
  if (!env.REDIS_URL) {
    const since = new Date().toISOString();
    return { limiter: new MemoryLimiter(), describe: 'in-memory', check: async () => ({ status: 'ok', target: 'in-memory', since }) };
  }
  checkRedisUrl(env.REDIS_URL);
  const target = withoutCredentials(env.REDIS_URL);
  const availability = new Availability(target, opts.onAvailabilityChange);
  const { RedisLimiter } = await import('./redis.js');
  const redis = new RedisLimiter(env.REDIS_URL, env.GATEWAY_REDIS_PREFIX || 'gw:', availability);
  // Serve only once connected, so the first requests are not refused; a dead Redis does not stop the start.
  await redis.firstConnection;
  return {
    limiter: new ResilientLimiter(redis, opts.policy, opts.onFallback),
    describe: `redis ${target} (on error: ${opts.policy})`,
    async check() {
      await redis.ping().catch(() => undefined);
      return availability.check();
    },
  };
}
