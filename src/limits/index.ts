/** Picks the limiter backend: Redis when REDIS_URL is set (shared by replicas), else in memory. */
import { MemoryLimiter } from './memory.js';
import { RedisLimiter } from './redis.js';
import type { Limiter } from './types.js';

/** The limiter for this process. */
export function createLimiter(env: NodeJS.ProcessEnv): Limiter {
  return env.REDIS_URL ? new RedisLimiter(env.REDIS_URL, env.GATEWAY_REDIS_PREFIX || 'gw:') : new MemoryLimiter();
}
