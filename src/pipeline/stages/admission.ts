/**
 * Stage 4, admission: one step before any upstream call. First the request, token and concurrency
 * limits (429, never billed); then, on billable routes, the budget: the meter prices the request's most
 * and it is reserved in one guarded statement (src/pipeline/hold.ts): no reservation, 402, no upstream
 * call. The meter decides what is counted; this stage names no unit.
 */
import { admit, scopesOf } from '../../limits/admission.js';
import { meterOf } from '../../meters/index.js';
import { reserveHold } from '../hold.js';
import type { Stage } from '../stage.js';

/** Limits every proxy route; reserves on billable ones. */
export const admissionStage: Stage = {
  name: 'admission',
  compile: (route, runtime) => {
    if (route.manifest.handler !== 'proxy') return null;
    return async (ctx) => {
      const meter = meterOf(ctx);
      const demand = meter ? meter.demand(ctx) : { tokens: 0, inputTokens: 0 };
      const ticket = await admit(runtime.limiter, scopesOf(ctx.auth!, ctx.gateway.settings.limits), demand.tokens, demand.inputTokens, (scope, limit) => runtime.metrics?.limiterRejected(scope as 'account' | 'key', limit as 'requests' | 'tokens' | 'concurrency'));
      ctx.limit = { ticket, billedTokens: 0 };
      if (meter) await reserveHold(ctx, runtime, meter, demand);
    };
  },
};
