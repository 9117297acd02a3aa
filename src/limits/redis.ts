/**
 * The shared limiter for N replicas (REDIS_URL): the same token buckets and concurrency leases as
 * the in-memory one, each admission one Lua script, so the check and the take are atomic across
 * processes. Time comes from the Redis server, so replicas' clocks do not matter.
 */
import { randomHex } from '../ledger/ids.js';
import { Redis } from 'ioredis';
import { DependencyUnavailableError } from '../errors.js';
import { Availability, withoutCredentials } from '../observability/availability.js';
import { AdmissionLostError, LEASE_TTL_MS, plan, type Admission, type Limiter, type LimitScope, type Ticket } from './types.js';

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

/** A limiter call the connection failed; `sent`: it went out on a ready connection, so it may have run. */
class CallFailedError extends DependencyUnavailableError {
  constructor(message: string, readonly sent: boolean, cause: unknown) {
    super('limiter', message, { cause });
  }
}

/** How long calls made right after the start wait for the first connection (then the outage policy applies). */
export const FIRST_CONNECT_MS = 3_000;

/** How long one limiter call may take before the backend counts as unavailable. */
const COMMAND_TIMEOUT_MS = 1_000;

/**
 * The Redis limiter. While Redis is unreachable every call fails at once (no offline queue, no
 * per-command retries) with DependencyUnavailableError; the client reconnects in the background and
 * `availability` reports the outage once when it starts and once when it ends (issue 8 item 2).
 */
export class RedisLimiter implements Limiter {
  private readonly redis: Redis;
  constructor(url: string, private readonly prefix = 'gw:', readonly availability = new Availability(withoutCredentials(url))) {
    this.redis = new Redis(url, {
      lazyConnect: false, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 2_000, commandTimeout: COMMAND_TIMEOUT_MS,
      retryStrategy: (attempt) => Math.min(100 * attempt, 2_000),
    });
    // ioredis prints a stack trace for every connection error that has no listener.
    this.redis.on('error', (err: Error) => availability.down(err));
    this.redis.on('ready', () => availability.ok());
    this.firstConnection = this.connected(FIRST_CONNECT_MS);
  }

  /** Settles once the first connection is made or given up on (FIRST_CONNECT_MS); calls made before it wait for it. */
  readonly firstConnection: Promise<boolean>;

  /** One script call; a failure of the connection (not of the script) becomes CallFailedError. */
  private async eval(script: string, keys: string[], args: Array<string | number>): Promise<unknown> {
    if (this.redis.status !== 'ready') await this.firstConnection;
    const sent = this.redis.status === 'ready';
    try {
      const result = await this.redis.eval(script, keys.length, ...keys, ...args);
      this.availability.ok();
      return result;
    } catch (err) {
      if ((err as Error).name === 'ReplyError') throw err;
      this.availability.down(err);
      throw new CallFailedError(`limiter backend unavailable: ${(err as Error).message}`, sent, err);
    }
  }

  /** Resolves once connected, or after `timeoutMs` (an unreachable Redis is then handled by the policy). */
  private async connected(timeoutMs: number): Promise<boolean> {
    if (this.redis.status === 'ready') return true;
    return new Promise<boolean>((resolve) => {
      const done = (ready: boolean): void => { clearTimeout(timer); this.redis.off('ready', onReady); resolve(ready); };
      const onReady = (): void => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.redis.once('ready', onReady);
    });
  }

  /** Round trip to Redis (readiness). While disconnected, the connection's own error stays the reason shown. */
  async ping(): Promise<void> {
    if (this.redis.status !== 'ready') {
      if (this.availability.isUp) this.availability.down(new Error(`not connected (${this.redis.status})`));
      throw new Error('not connected');
    }
    try {
      await this.redis.ping();
      this.availability.ok();
    } catch (err) {
      this.availability.down(err);
      throw err;
    }
  }

  async admit(scopes: LimitScope[], tokens: number): Promise<Admission> {
    const { buckets, leases } = plan(scopes, tokens);
    if (buckets.length === 0 && leases.length === 0) return { ok: true, ticket: { scopes, tokens, lease: '' } };
    const lease = randomHex(8);
    const keys = [...buckets.map((b) => this.prefix + b.key), ...leases.map((l) => this.prefix + l.key)];
    const args = [buckets.length, leases.length, lease, LEASE_TTL_MS, ...buckets.flatMap((b) => [b.capacity, b.cost]), ...leases.map((l) => l.limit)];
    const result = (await this.eval(ADMIT, keys, args).catch((err: unknown) => {
      // The script may have run and taken a slot before the answer was lost (a cut connection, a
      // timeout): the caller gets what frees it. Tokens and request counts taken stay taken.
      if (err instanceof CallFailedError && err.sent && leases.length > 0) {
        throw new AdmissionLostError(err, { scopes, tokens: 0, lease });
      }
      throw err;
    })) as number[];
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
    await this.eval(FINISH, keys, args);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
