/**
 * In-process limiter (no REDIS_URL): token buckets refilled continuously (capacity per minute) and
 * concurrency leases. Exact within one process; replicas need the Redis limiter.
 */
import { LEASE_TTL_MS, plan, type Admission, type Limiter, type LimitScope, type Ticket } from './types.js';

interface Bucket { tokens: number; at: number; capacity: number; }

/** The in-memory limiter. */
export class MemoryLimiter implements Limiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly leases = new Map<string, Map<string, number>>();
  private leaseSeq = 0;

  private level(key: string, capacity: number, now: number): Bucket {
    const bucket = this.buckets.get(key) ?? { tokens: capacity, at: now, capacity };
    bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) * capacity) / 60_000);
    bucket.at = now;
    bucket.capacity = capacity;
    this.buckets.set(key, bucket);
    return bucket;
  }

  /**
   * The live leases of `key`. Every lease lives LEASE_TTL_MS from when it was taken, so a Map (kept in
   * insertion order) holds them in expiry order: the expired ones are at its front, and a check reads
   * only those, not every lease held (256 in flight made that scan a tenth of an admission). A clock
   * stepped back can only keep an expired lease a little longer, never free a live one.
   */
  private live(key: string, now: number): Map<string, number> {
    let set = this.leases.get(key);
    if (!set) {
      set = new Map<string, number>();
      this.leases.set(key, set);
    }
    for (const [member, expires] of set) {
      if (expires > now) break;
      set.delete(member);
    }
    return set;
  }

  async admit(scopes: LimitScope[], tokens: number, now = Date.now()): Promise<Admission> {
    const { buckets, leases } = plan(scopes, tokens);
    for (const b of buckets) {
      const bucket = this.level(b.key, b.capacity, now);
      if (bucket.tokens < b.cost) return { ok: false, scope: b.scope, limit: b.limit, retryAfterMs: Math.ceil(((b.cost - bucket.tokens) * 60_000) / b.capacity) };
    }
    for (const l of leases) {
      if (this.live(l.key, now).size >= l.limit) return { ok: false, scope: l.scope, limit: 'concurrency', retryAfterMs: 1000 };
    }
    // A lease needs only to be unique in this process's maps (the Redis limiter's are random).
    const lease = String(++this.leaseSeq);
    for (const b of buckets) this.buckets.get(b.key)!.tokens -= b.cost;
    for (const l of leases) this.leases.get(l.key)!.set(lease, now + LEASE_TTL_MS);
    return { ok: true, ticket: { scopes, tokens, lease } };
  }

  async finish(ticket: Ticket, actualTokens: number, now = Date.now()): Promise<void> {
    const { buckets, leases } = plan(ticket.scopes, ticket.tokens);
    for (const b of buckets) {
      if (b.limit !== 'tokens') continue;
      // Give back what was over-estimated, or take the excess (a debt that delays later requests).
      const bucket = this.level(b.key, b.capacity, now);
      bucket.tokens = Math.min(b.capacity, bucket.tokens + b.cost - actualTokens);
    }
    for (const l of leases) this.leases.get(l.key)?.delete(ticket.lease);
  }

  async close(): Promise<void> {
    this.buckets.clear();
    this.leases.clear();
  }
}
