/**
 * Sign-in throttling (issue 13: "sign-in is rate limited per email and per address"): failed attempts
 * are counted per email and per client address in fixed windows; past either limit, sign-in answers
 * 429 with Retry-After until the window ends, whether or not the password is right, so guessing gains
 * nothing. A success clears the email's count. Counts live in this process (a replica counts its own).
 */
import { LRUCache } from 'lru-cache';

/** The limits: attempts per email and per address within `windowMs`. */
export interface ThrottleLimits { perEmail: number; perAddress: number; windowMs: number }

interface Window { failures: number; endsAt: number }

/** Counts failed sign-ins. */
export class SigninThrottle {
  // Made at the first sign-in: the cache allocates its tables for `max` entries up front (about 2.4
  // MB), which a gateway whose console nobody signs in to should not keep resident (issue 8, memory).
  private cache: LRUCache<string, Window> | null = null;

  constructor(private readonly limits: () => ThrottleLimits, private readonly now: () => number = Date.now) {}

  private get windows(): LRUCache<string, Window> {
    this.cache ??= new LRUCache<string, Window>({ max: 100_000 });
    return this.cache;
  }

  /** Seconds until a new attempt is allowed for this email or address; 0 when allowed now. */
  retryAfterSeconds(email: string, address: string): number {
    const { perEmail, perAddress } = this.limits();
    const wait = (key: string, limit: number): number => {
      const w = this.windows.get(key);
      return w && w.endsAt > this.now() && w.failures >= limit ? Math.ceil((w.endsAt - this.now()) / 1000) : 0;
    };
    return Math.max(wait(`email:${email}`, perEmail), wait(`addr:${address}`, perAddress));
  }

  /** Counts one failed attempt against both. */
  fail(email: string, address: string): void {
    for (const key of [`email:${email}`, `addr:${address}`]) {
      const w = this.windows.get(key);
      if (w && w.endsAt > this.now()) w.failures += 1;
      else this.windows.set(key, { failures: 1, endsAt: this.now() + this.limits().windowMs });
    }
  }

  /** A successful sign-in clears the email's failures (the address keeps its count). */
  succeed(email: string): void {
    this.windows.delete(`email:${email}`);
  }
}
