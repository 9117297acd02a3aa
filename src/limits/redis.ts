/**
 * The shared limiter for N replicas (REDIS_URL): the same token buckets and concurrency leases as
 * the in-memory one, each admission one Lua script, so the check and the take are atomic across
 * processes. Time comes from the Redis server, so replicas' clocks do not matter.
 */
import { randomHex } from '../ledger/ids.js';
import { Redis } from 'ioredis';
import { LEASE_TTL_MS, plan, type Admission, type Limiter, type LimitScope, type Ticket } from './types.js';

// KEYS: buckets..., leases...; ARGV: nBuckets, nLeases, leaseId, leaseTtlMs, then per bucket
// (capacity, cost), then per lease (limit). Returns {0} or {1, index, waitMs}.
const ADMIT = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local nb, nl = tonumber(ARGV[1]), tonumber(ARGV[2])
local levels = {}
for i = 1, nb do
  local cap, cost = tonumber(ARGV[4 + 2 * i - 1]), tonumber(ARGV[4 + 2 * i])
  local s = redis.call('HMGET', KEYS[i], 'tokens', 'at')
  local tokens, at = tonumber(s[1]) or cap, tonumber(s[2]) or now
  tokens = math.min(cap, tokens + (now - at) * cap / 60000)
  if tokens < cost then return {1, i, math.ceil((cost - tokens) * 60000 / cap)} end
  levels[i] = tokens - cost
end
for j = 1, nl do
  local key, limit = KEYS[nb + j], tonumber(ARGV[4 + 2 * nb + j])
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  if redis.call('ZCARD', key) >= limit then return {1, nb + j, 1000} end
end
for i = 1, nb do
  redis.call('HSET', KEYS[i], 'tokens', levels[i], 'at', now)
  redis.call('PEXPIRE', KEYS[i], 120000)
end
for j = 1, nl do
  redis.call('ZADD', KEYS[nb + j], now + tonumber(ARGV[4]), ARGV[3])
  redis.call('PEXPIRE', KEYS[nb + j], tonumber(ARGV[4]))
end
return {0}`;

// KEYS: token buckets..., leases...; ARGV: nBuckets, leaseId, then per bucket (capacity, refund).
const FINISH = `
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local nb = tonumber(ARGV[1])
for i = 1, nb do
  local cap, refund = tonumber(ARGV[2 + 2 * i - 1]), tonumber(ARGV[2 + 2 * i])
  local s = redis.call('HMGET', KEYS[i], 'tokens', 'at')
  local tokens, at = tonumber(s[1]) or cap, tonumber(s[2]) or now
  tokens = math.min(cap, tokens + (now - at) * cap / 60000 + refund)
  redis.call('HSET', KEYS[i], 'tokens', tokens, 'at', now)
  redis.call('PEXPIRE', KEYS[i], 120000)
end
for j = nb + 1, #KEYS do redis.call('ZREM', KEYS[j], ARGV[2]) end
return 0`;

/** The Redis limiter. */
export class RedisLimiter implements Limiter {
  private readonly redis: Redis;
  constructor(url: string, private readonly prefix = 'gw:') {
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
  }

  async admit(scopes: LimitScope[], tokens: number): Promise<Admission> {
    const { buckets, leases } = plan(scopes, tokens);
    if (buckets.length === 0 && leases.length === 0) return { ok: true, ticket: { scopes, tokens, lease: '' } };
    const lease = randomHex(8);
    const keys = [...buckets.map((b) => this.prefix + b.key), ...leases.map((l) => this.prefix + l.key)];
    const args = [buckets.length, leases.length, lease, LEASE_TTL_MS, ...buckets.flatMap((b) => [b.capacity, b.cost]), ...leases.map((l) => l.limit)];
    const result = (await this.redis.eval(ADMIT, keys.length, ...keys, ...args)) as number[];
    if (result[0] === 0) return { ok: true, ticket: { scopes, tokens, lease } };
    const index = result[1]! - 1;
    const which = index < buckets.length ? buckets[index]! : { scope: leases[index - buckets.length]!.scope, limit: 'concurrency' as const };
    return { ok: false, scope: which.scope, limit: which.limit, retryAfterMs: result[2]! };
  }

  async finish(ticket: Ticket, actualTokens: number): Promise<void> {
    const { buckets, leases } = plan(ticket.scopes, ticket.tokens);
    const tokenBuckets = buckets.filter((b) => b.limit === 'tokens');
    if (tokenBuckets.length === 0 && leases.length === 0) return;
    const keys = [...tokenBuckets.map((b) => this.prefix + b.key), ...leases.map((l) => this.prefix + l.key)];
    const args = [tokenBuckets.length, ticket.lease, ...tokenBuckets.flatMap((b) => [b.capacity, b.cost - actualTokens])];
    await this.redis.eval(FINISH, keys.length, ...keys, ...args);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
