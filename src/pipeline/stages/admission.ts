/**
 * Stage 4, admission: one step before any upstream call, in a fixed order (DESIGN.md "Idempotency",
 * "Reserve, then settle"):
 *  1. the operation-ID claim, when the route takes ids (src/pipeline/operation-ids.ts): one insert; a
 *     reuse of a completed operation is answered here and nothing after runs; one still running is 409;
 *  2. the request, quantity and concurrency limits (429, never billed), counting the meter's demand in
 *     the limiter's units;
 *  3. on billable routes, the budget: the meter prices the request's most and it is reserved in one
 *     guarded statement (src/pipeline/hold.ts): no reservation, 402, no upstream call.
 * A request refused at 2 or 3 gives its claimed id back. The meter decides what is counted and how;
 * this stage names no unit.
 */
import { admit, scopesOf } from '../../limits/admission.js';
import { meterOf } from '../../meters/index.js';
import type { Demand } from '../../meters/types.js';
import { reserveHold } from '../hold.js';
import { operationClaim } from '../operation-ids.js';
import type { Stage } from '../stage.js';

/** A free route's demand: nothing counted beyond the request itself. */
const NOTHING: Demand = { limiterUnits: 0, limiterFloor: 0, floorParam: null };

/** Claims, limits and reserves every proxy route's requests (reserves on billable ones). */
export const admissionStage: Stage = {
  name: 'admission',
  compile: (route, runtime) => {
    if (route.manifest.handler !== 'proxy') return null;
    const claim = operationClaim(route, runtime);
    return async (ctx) => {
      if (claim) {
        await claim(ctx);
        if (ctx.answered) return;
      }
      const meter = meterOf(ctx);
      const demand = meter ? meter.demand(ctx) : NOTHING;
      const ticket = await admit(runtime.limiter, scopesOf(ctx.auth!, ctx.gateway.settings.limits), demand, (scope, limit) => runtime.metrics?.limiterRejected(scope, limit));
      ctx.limit = { ticket, billedUnits: 0 };
      if (meter) await reserveHold(ctx, runtime, meter, demand);
    };
  },
};
