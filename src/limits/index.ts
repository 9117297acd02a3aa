/**
 * Picks the limiter backend: Redis when REDIS_URL is set (shared by replicas), else in memory. The
 * Redis client is imported only when it is used, so a single gateway does not carry it in memory.
 */
import { MemoryLimiter } from './memory.js';
import type { Limiter } from './types.js';

/** The limiter for this process. */
export async function createLimiter(env: NodeJS.ProcessEnv): Promise<Limiter> {
  if (!env.REDIS_URL) return new MemoryLimiter();
  const { RedisLimiter } = await import('./redis.js');
  return new RedisLimiter(env.REDIS_URL, env.GATEWAY_REDIS_PREFIX || 'gw:');
}
