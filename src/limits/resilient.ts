/**
 * What admission does when the shared limiter backend (Redis) cannot be reached, as the operator
 * declared in `limits.on_backend_error` (issue 8 item 2):
 *  - `fail_closed` (default): the request is refused with 503 `limiter_unavailable` and Retry-After,
 *    before anything is reserved or charged;
 *  - `fail_open`: the request is admitted on this process's in-memory limits (per replica, so looser
 *    than the shared ones), with a warning per outage and the `gateway_limiter_fallback_total` metric.
 * A ticket remembers which backend admitted it, so it is finished where it was taken.
 */
import { DependencyUnavailableError, dependencyError } from '../errors.js';
import { MemoryLimiter } from './memory.js';
import type { Admission, Limiter, LimitScope, Ticket } from './types.js';

/** The declared policy. */
export type BackendErrorPolicy = 'fail_closed' | 'fail_open';

/** A ticket taken by the in-memory fallback during an outage. */
const fallbackTickets = new WeakSet<Ticket>();

/** Wraps a shared limiter with the outage policy. */
export class ResilientLimiter implements Limiter {
  private readonly fallback = new MemoryLimiter();

  constructor(
    private readonly primary: Limiter,
    private readonly policy: BackendErrorPolicy,
    private readonly onFallback: () => void = () => undefined,
  ) {}

  async admit(scopes: LimitScope[], tokens: number, now?: number): Promise<Admission> {
    try {
      return await this.primary.admit(scopes, tokens, now);
    } catch (err) {
      if (!(err instanceof DependencyUnavailableError)) throw err;
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
      // The slot is freed by its lease's expiry instead; the outage is already reported once.
      if (!(err instanceof DependencyUnavailableError)) throw err;
    }
  }

  async close(): Promise<void> {
    await this.primary.close();
    await this.fallback.close();
  }
}
