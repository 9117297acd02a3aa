/**
 * Redis for tests: REDIS_TEST_URL (default redis://127.0.0.1:6379). Suites that need it use
 * describeRedis: skipped with a loud warning when Redis is unreachable, failing under CI.
 */
import { Redis } from 'ioredis';
import { describe } from 'vitest';

/** The test Redis. */
export const redisUrl = process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379';

async function probe(): Promise<string | null> {
  const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000, retryStrategy: () => null });
  try {
    await client.connect();
    await client.ping();
    return null;
  } catch (error) {
    return `${redisUrl} unreachable (${(error as Error).message})`;
  } finally {
    client.disconnect();
  }
}

const unreachable = await probe();
if (unreachable && process.env.CI) throw new Error(`Redis suite cannot run under CI: ${unreachable}`);
if (unreachable) console.warn(`\n*** Redis suite skipped: ${unreachable} ***\n`);

/** describe, or a skip with a warning when Redis is unreachable (under CI: the file fails). */
export const describeRedis: typeof describe = unreachable ? (describe.skip as typeof describe) : describe;
