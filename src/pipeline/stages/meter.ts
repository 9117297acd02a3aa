/**
 * Stage 7, meter: settles the reservation to the usage rows the route's meter bills for what happened,
 * or releases it (spec 1, 4.1 rules 1-2: failures are not charged, delivered work is). The meter
 * decides what an outcome costs (src/meters); this stage names no unit. The headers carrying the
 * settled quantity and charge are set here, before the answer is written (an answer completes only
 * once it is billed).
 */
import { meterOf } from '../../meters/index.js';
import { releaseHold, settleHold } from '../hold.js';
import { videoJobs } from '../local/videos.js';
import type { Stage } from '../stage.js';

const NO_TOKENS = { input: 0, output: 0, cachedInput: 0, cacheWrite: 0, reasoning: 0 };

/** Settles billable proxy routes. */
export const meterStage: Stage = {
  name: 'meter',
  compile: (route, runtime) => {
    if (!route.billable || route.manifest.handler !== 'proxy') return null;
    const job = route.manifest.job !== undefined;
    return async (ctx) => {
      const hold = ctx.hold;
      const meter = meterOf(ctx);
      if (!hold || !hold.open || !meter) return;
      // A client that left before the first byte of the answer pays nothing.
      const left = ctx.clientGone.signal.aborted && !ctx.started;
      // A job route (spec 4.16): the accepted job takes the hold over; the poller bills what it produces.
      if (job && ctx.outcome?.delivery === 'full') {
        await videoJobs(runtime).start(ctx);
        return;
      }
      const bill = ctx.outcome && !left ? meter.bill(ctx, ctx.outcome, hold.inputEstimate) : null;
      if (!bill) {
        await releaseHold(ctx, runtime);
        return;
      }
      if (ctx.limit) ctx.limit.billedTokens = bill.limiterTokens;
      await settleHold(ctx, runtime, bill);
      const offering = ctx.model!.offering;
      runtime.metrics?.metered(ctx.model!.provider.id, offering.id, bill.tokens ?? NO_TOKENS, bill.rows.reduce((sum, r) => sum + r.amountNano, 0n));
    };
  },
};
