/** Rate and concurrency limits (spec 7 "429", 8; issue 4): types shared by the limiter backends. */
import { DependencyUnavailableError } from '../errors.js';

/** Limits of one scope; null or absent means unlimited. */
export interface Limits {
  requests_per_minute?: number | null;
  tokens_per_minute?: number | null;
  concurrent_requests?: number | null;
}

/**
 * The caller as the limiter sees it: its account and key, and the limit overrides of each (null: the
 * configured defaults for the account, no key limits). The pipeline's authenticated caller
 * (src/pipeline/auth-cache.ts) is one.
 */
export interface LimitedCaller {
  readonly accountId: string;
  readonly keyId: string;
  readonly accountLimits: Limits | null;
  readonly keyLimits: Limits | null;
}

/** Which limit refused a request. */
export type LimitKind = 'requests' | 'tokens' | 'concurrency';

/** One scope a request counts against (its account, and its key when the key has limits). */
export interface LimitScope { scope: 'account' | 'key'; id: string; limits: Limits; }

/** What a request counts against the quantity limit, in the limiter's own units (its per-minute bucket). */
export interface LimiterDemand {
  /** What the limiter's quantity bucket takes at admission (corrected to the bill's `limiterUnits` at the end). */
  limiterUnits: number;
  /** The part of `limiterUnits` the request itself carries, which no wait shrinks: above a scope's limit it is a 400, not a 429. */
  limiterFloor: number;
  /** The request field that floor was counted from (`messages`, `input`, `text`): that 400's `param`; null when none. */
  floorParam: string | null;
}

/** What the limiter took for an admitted request, to give back or correct when it ends. */
export interface Ticket { scopes: LimitScope[]; tokens: number; lease: string; }

/** The limiter's answer. */
export type Admission =
  | { ok: true; ticket: Ticket }
  | { ok: false; scope: LimitScope['scope']; limit: LimitKind; retryAfterMs: number };

/** A limiter backend: in memory (one process) or Redis (shared by every replica). */
export interface Limiter {
  /** Atomically checks every limit of every scope and, only if all fit, takes one request, the tokens and a concurrency slot. */
  admit(scopes: LimitScope[], tokens: number, now?: number): Promise<Admission>;
  /** Ends a request: frees its concurrency slot and corrects its token estimate to `actualTokens`. */
  finish(ticket: Ticket, actualTokens: number, now?: number): Promise<void>;
  close(): Promise<void>;
}

/** How long a concurrency slot survives a crashed process that never freed it. */
export const LEASE_TTL_MS = 15 * 60 * 1000;

/** A token bucket that refills `capacity` per minute. */
export interface BucketSpec { key: string; capacity: number; cost: number; }

/** The buckets and lease sets a request touches, in a fixed order (the order rejections are reported in). */
export function plan(scopes: LimitScope[], tokens: number): { buckets: Array<BucketSpec & { scope: LimitScope['scope']; limit: LimitKind }>; leases: Array<{ key: string; limit: number; scope: LimitScope['scope'] }> } {
  const buckets: Array<BucketSpec & { scope: LimitScope['scope']; limit: LimitKind }> = [];
  const leases: Array<{ key: string; limit: number; scope: LimitScope['scope'] }> = [];
  for (const s of scopes) {
    const l = s.limits;
    if (l.requests_per_minute) buckets.push({ key: `rl:${s.scope}:${s.id}:req`, capacity: l.requests_per_minute, cost: 1, scope: s.scope, limit: 'requests' });
    if (l.tokens_per_minute && tokens > 0) buckets.push({ key: `rl:${s.scope}:${s.id}:tok`, capacity: l.tokens_per_minute, cost: Math.min(tokens, l.tokens_per_minute), scope: s.scope, limit: 'tokens' });
    if (l.concurrent_requests) leases.push({ key: `rl:${s.scope}:${s.id}:conc`, limit: l.concurrent_requests, scope: s.scope });
  }
  return { buckets, leases };
}

/**
 * A shared-backend admission whose answer was lost (the connection failed after the request was
 * sent): the backend may have taken a concurrency slot. Finishing `undo` frees it if it did and does
 * nothing if it did not; it refunds no tokens (it carries none).
 */
export class AdmissionLostError extends DependencyUnavailableError {
  constructor(cause: DependencyUnavailableError, readonly undo: Ticket) {
    super(cause.dependency, cause.message, { cause });
  }
}
