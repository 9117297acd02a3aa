/**
 * What admission does when the shared limiter backend (Redis) cannot be reached, as the operator
 * declared in `limits.on_backend_error` (issue 8 item 2):
 *  - `fail_closed` (default): the request is refused with 503 `limiter_unavailable` and Retry-After,
 *    before anything is reserved or charged;
 *  - `fail_open`: the request is admitted on this process's in-memory limits (per replica, so looser
 *    than the shared ones), with a warning per outage and the `gateway_limiter_fallback_total` metric.
 * A ticket remembers which backend admitted it, so it is finished where it was taken. A finish the
 * shared backend could not take during an outage is replayed before the next admission, so the
 * concurrency slots of requests that ended during the outage do not stay taken for LEASE_TTL_MS
 * (test/e2e/redis-outage.test.ts); past MAX_UNFINISHED they are left to that expiry. An admission
 * whose answer was lost may have taken a slot: its undo waits with them (test/limits/resilient.test.ts).
 * A replayed finish whose first try did run refunds its unused tokens twice: a rate bucket over-credited
 * once by one request's unused estimate, at an outage, never money.
 */
import { DependencyUnavailableError, dependencyError } from '../errors.js';
import { MemoryLimiter } from './memory.js';
import { AdmissionLostError, type Admission, type Limiter, type LimitScope, type Ticket } from './types.js';

/** The declared policy. */
export type BackendErrorPolicy = 'fail_closed' | 'fail_open';

/** A ticket taken by the in-memory fallback during an outage. */
const fallbackTickets = new WeakSet<Ticket>();

/** At most this many finishes wait for the shared backend to return. */
const MAX_UNFINISHED = 10_000;

/** Wraps a shared limiter with the outage policy. */
export class ResilientLimiter implements Limiter {
  private readonly fallback = new MemoryLimiter();
  /** Finishes of shared-backend tickets that failed during an outage, replayed before the next admission. */
  private unfinished: Array<{ ticket: Ticket; actualTokens: number }> = [];

  constructor(
    private readonly primary: Limiter,
    private readonly policy: BackendErrorPolicy,
    private readonly onFallback: () => void = () => undefined,
  ) {}

  async admit(scopes: LimitScope[], tokens: number, now?: number): Promise<Admission> {
    try {
      if (this.unfinished.length > 0) await this.replayFinishes();
      return await this.primary.admit(scopes, tokens, now);
    } catch (err) {
      if (!(err instanceof DependencyUnavailableError)) throw err;
      if (err instanceof AdmissionLostError) this.keepUnfinished(err.undo, 0);
      if (this.policy === 'fail_closed') throw dependencyError('limiter');
      this.onFallback();
      const admission = await this.fallback.admit(scopes, tokens, now);
      if (admission.ok) fallbackTickets.add(admission.ticket);
      return admission;
    }
  }

  async finish(ticket: Ticket, actualTokens: number, now?: number): Promise<void> {
    if (fallbackTickets.has(ticket)) return this.fallback.finish(ticket, actualTokens, now);
    try {
      await this.primary.finish(ticket, actualTokens, now);
    } catch (err) {
      // Replayed once the backend answers again; the outage is already reported once.
      if (!(err instanceof DependencyUnavailableError)) throw err;
      this.keepUnfinished(ticket, actualTokens);
    }
  }

  /** Keeps a finish for the next admission that reaches the backend (at most MAX_UNFINISHED). */
  private keepUnfinished(ticket: Ticket, actualTokens: number): void {
    if (this.unfinished.length < MAX_UNFINISHED) this.unfinished.push({ ticket, actualTokens });
  }

  /** Replays the waiting finishes; those the backend still cannot take wait for the next admission. */
  private async replayFinishes(): Promise<void> {
    const pending = this.unfinished;
    this.unfinished = [];
    const results = await Promise.allSettled(pending.map((p) => this.primary.finish(p.ticket, p.actualTokens)));
    results.forEach((r, i) => {
      if (r.status === 'rejected' && r.reason instanceof DependencyUnavailableError) this.unfinished.push(pending[i]!);
    });
  }

  async close(): Promise<void> {
    await this.primary.close();
    await this.fallback.close();
  }
}
