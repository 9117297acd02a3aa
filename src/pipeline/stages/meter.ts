/**
 * Stage 7, meter: settles the reservation to the usage rows the route's meter bills for what happened,
 * or releases it (spec 1, 4.1 rules 1-2: failures are not charged, delivered work is). The meter
 * decides what an outcome costs (src/meters) and reports it to the metrics; this stage names no unit.
 * The headers carrying the settled quantity and charge are set here, before the answer is written (an
 * answer completes only once it is billed). On a job route the accepted job takes the hold over.
 */
import { meterOf } from '../../meters/index.js';
import { handHoldToJob, releaseHold, settleHold } from '../hold.js';
import { jobKindOf } from '../job-kinds.js';
import { withCarried } from '../rescue.js';
import type { Stage } from '../stage.js';

/** Settles billable proxy routes. */
export const meterStage: Stage = {
  name: 'meter',
  compile: (route, runtime) => {
    if (!route.billable || route.manifest.handler !== 'proxy') return null;
    const job = jobKindOf(route);
    return async (ctx) => {
      const hold = ctx.hold;
      const meter = meterOf(ctx);
      if (!hold || !hold.open || !meter) return;
      // A client that left before the first byte of the answer pays nothing (unless its request
      // outlives it: `ctx.work`, a claimed operation id whose result is kept for the id's retry).
      const left = ctx.work.aborted && !ctx.started;
      // A job route (spec 4.16): the accepted job is recorded and takes the hold over; its poller bills what it produces.
      if (job && ctx.outcome?.delivery === 'full') {
        await job.service(runtime).start(ctx);
        handHoldToJob(ctx);
        return;
      }
      // A rescued stream also owes what was delivered before its cut (issue 29 item 6).
      const bill = withCarried(ctx, ctx.outcome && !left ? meter.bill(ctx, ctx.outcome, hold.inputEstimate) : null);
      if (!bill) {
        await releaseHold(ctx, runtime);
        return;
      }
      if (ctx.limit) ctx.limit.billedUnits = bill.limiterUnits;
      await settleHold(ctx, runtime, bill);
      if (runtime.metrics) bill.observe(runtime.metrics);
    };
  },
};
