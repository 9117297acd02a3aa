/**
 * Key lookups with a short-lived cache keyed by the key's digest (the plaintext is never kept).
 * Admin changes to keys clear it at once in this process; other processes see them within `ttlMs`.
 *
 * A key in use stays off the store's path: a hit on an entry past half its life refreshes it in the
 * background, and a miss is looked up once however many requests carry the key meanwhile. Before,
 * every `ttlMs` each busy key's next requests all waited for a store read (one per request arriving
 * while the first was in flight): the auth stage's p99 at 100 req/s was a store round trip (issue 8).
 */
import { LRUCache } from 'lru-cache';
import type { Limits } from '../limits/types.js';
import type { KeyControls } from '../ledger/key-controls.js';
import { digestKey } from '../ledger/keys.js';

/**
 * An authenticated caller, with the limit overrides of its account and key (the limiter reads it as a
 * LimitedCaller, src/limits/types.ts) and the key's controls (issue 33 item 2; absent: none).
 */
export interface Caller { accountId: string; keyId: string; accountLimits: Limits | null; keyLimits: Limits | null; controls?: KeyControls; }

/** The store read behind the cache (the Ledger). */
interface KeyLookup { authenticate(key: string): Promise<Caller | null> }

/** Caches key lookups; a miss (unknown key) is cached too, briefly, to blunt key-guessing load. */
export class AuthCache {
  private readonly cache: LRUCache<string, Caller | false>;
  /** Lookups in flight, by digest: one store read per key at a time. */
  private readonly inFlight = new Map<string, Promise<Caller | null>>();
  /** Bumped by clear(): a lookup that started before it must not put its answer back. */
  private generation = 0;

  constructor(private readonly ledger: KeyLookup, private readonly ttlMs = 2000, now?: () => number) {
    // Ten thousand keys used within `ttlMs` is more than one process serves; lru-cache allocates its
    // tables for `max` entries up front, so a larger bound only costs resident memory (issue 8).
    this.cache = new LRUCache({ max: 10_000, ttl: ttlMs, ...(now ? { perf: { now }, ttlResolution: 0 } : {}) });
  }

  /** The caller for a key, or null. */
  async authenticate(key: string): Promise<Caller | null> {
    const digest = digestKey(key);
    const hit = this.cache.get(digest);
    if (hit === undefined) return this.lookUp(digest, key);
    if (this.cache.getRemainingTTL(digest) < this.ttlMs / 2) {
      // The cached answer is still within its life and serves this request; a store that is away
      // fails the refresh quietly, and the entry then expires as it would have.
      this.lookUp(digest, key).catch(() => undefined);
    }
    return hit || null;
  }

  /** Forgets every cached lookup (after a key is rotated or deleted). */
  clear(): void {
    this.generation += 1;
    this.inFlight.clear();
    this.cache.clear();
  }

  /** One store read per digest at a time; its answer is cached unless clear() ran meanwhile. */
  private lookUp(digest: string, key: string): Promise<Caller | null> {
    const pending = this.inFlight.get(digest);
    if (pending) return pending;
    const generation = this.generation;
    const lookup = this.ledger.authenticate(key).then((caller) => {
      if (generation === this.generation) this.cache.set(digest, caller ?? false);
      return caller;
    }).finally(() => {
      if (this.inFlight.get(digest) === lookup) this.inFlight.delete(digest);
    });
    this.inFlight.set(digest, lookup);
    return lookup;
  }
}

/** The key from `Authorization: Bearer` or `x-api-key` (spec 5: both styles on every route). */
export function presentedKey(headers: Record<string, string | string[] | undefined>): string | null {
  const bearer = headers.authorization;
  if (typeof bearer === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(bearer);
    if (match) return match[1]!;
  }
  const apiKey = headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey.length > 0 ? apiKey.trim() : null;
}
