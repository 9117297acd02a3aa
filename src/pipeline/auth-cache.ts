/**
 * Key lookups with a short-lived cache keyed by the key's digest (the plaintext is never kept).
 * Admin changes to keys clear it at once in this process; other processes see them within `ttlMs`.
 */
import { LRUCache } from 'lru-cache';
import type { Ledger } from '../ledger/ledger.js';
import type { Limits } from '../limits/types.js';
import { digestKey } from '../ledger/keys.js';

/** An authenticated caller, with the limit overrides of its account and key. */
export interface Caller { accountId: string; keyId: string; accountLimits: Limits | null; keyLimits: Limits | null; }

/** Caches key lookups; a miss (unknown key) is cached too, briefly, to blunt key-guessing load. */
export class AuthCache {
  private readonly cache: LRUCache<string, Caller | false>;
  constructor(private readonly ledger: Ledger, ttlMs = 2000) {
    // Ten thousand keys used within `ttlMs` is more than one process serves; lru-cache allocates its
    // tables for `max` entries up front, so a larger bound only costs resident memory (issue 8).
    this.cache = new LRUCache({ max: 10_000, ttl: ttlMs });
  }

  /** The caller for a key, or null. */
  async authenticate(key: string): Promise<Caller | null> {
    const digest = digestKey(key);
    const hit = this.cache.get(digest);
    if (hit !== undefined) return hit || null;
    const caller = await this.ledger.authenticate(key);
    this.cache.set(digest, caller ?? false);
    return caller;
  }

  /** Forgets every cached lookup (after a key is rotated or deleted). */
  clear(): void {
    this.cache.clear();
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
