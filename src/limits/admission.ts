/**
 * Rate-limit admission for one request (spec 7 "429", 4.1 rule 4): the account's limits (the
 * config defaults, field by field overridden by the account's own) and, when set, the key's. A
 * refusal is a 429 with Retry-After and retry-after-ms, before any reservation or upstream call;
 * a request that could never fit the token limit is a 400, not an endless 429.
 */
import { GatewayError } from '../errors.js';
import type { LimitKind, LimitScope, LimitedCaller, Limits, Limiter, LimiterDemand, Ticket } from './types.js';

/** The scopes a caller's request counts against. */
export function scopesOf(caller: LimitedCaller, defaults: Limits): LimitScope[] {
  const scopes: LimitScope[] = [{ scope: 'account', id: caller.accountId, limits: { ...defaults, ...(caller.accountLimits ?? {}) } }];
  if (caller.keyLimits) scopes.push({ scope: 'key', id: caller.keyId, limits: caller.keyLimits });
  return scopes;
}

/**
 * Admits the request or throws the 429 (or 400). The demand's `limiterUnits` is what the token bucket
 * takes (0 on free routes and for meters the limiter does not count); its floor, the part the request
 * itself carries: more than a scope's limit is a 400 naming the field it was counted from.
 */
export async function admit(limiter: Limiter, scopes: LimitScope[], demand: LimiterDemand, onReject: (scope: LimitScope['scope'], limit: LimitKind) => void): Promise<Ticket> {
  const inputTokens = demand.limiterFloor;
  for (const s of scopes) {
    const tpm = s.limits.tokens_per_minute;
    if (tpm && inputTokens > tpm) {
      const what = demand.floorParam ? `\`${demand.floorParam}\`` : 'the input';
      throw new GatewayError('invalid_request', `This request needs about ${inputTokens} input tokens, more than the ${s.scope}'s limit of ${tpm} tokens per minute; it can never be admitted. Shorten ${what}.`, { param: demand.floorParam });
    }
  }
  const admission = await limiter.admit(scopes, demand.limiterUnits);
  if (admission.ok) return admission.ticket;
  onReject(admission.scope, admission.limit);
  const ms = Math.max(1, admission.retryAfterMs);
  const what = admission.limit === 'concurrency' ? 'concurrent requests' : `${admission.limit} per minute`;
  throw new GatewayError('rate_limited', `Rate limit reached: the ${admission.scope}'s ${what}. Retry after ${Math.ceil(ms / 1000)} s.`, {
    headers: { 'retry-after': String(Math.ceil(ms / 1000)), 'retry-after-ms': String(ms) },
  });
}
