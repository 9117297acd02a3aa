/**
 * Stage 3, rate-limit: admission control before any upstream call. Request and token rate limits
 * are a pass-through for now; the budget is enforced here by reserving the request's maximum cost
 * in one guarded statement (DESIGN.md "Reserve, then settle"): no reservation, 402, no upstream call.
 */
import { holdAmount } from '../../billing/pricing.js';
import { GatewayError } from '../../errors.js';
import type { Stage } from '../stage.js';

/** Reserves the maximum cost of a billable request. */
export const rateLimitStage: Stage = {
  name: 'rate-limit',
  compile: (route, runtime) => {
    if (!route.billable || route.manifest.handler !== 'proxy') return null;
    return async (ctx) => {
      const { offering } = ctx.model!;
      const settings = ctx.gateway.settings;
      const inputEstimate = ctx.format.estimateInputTokens(ctx.body);
      const maxOutput = ctx.format.requestedMaxOutput(ctx.body) ?? offering.maxOutputTokens;
      const amountNano = holdAmount(inputEstimate, maxOutput, settings.inputMarginPercent, offering);
      const reserved = await runtime.ledger.reserve({ holdId: ctx.requestId, accountId: ctx.auth!.accountId, amountNano, ttlMs: settings.holdTtlMs });
      if (!reserved) {
        throw new GatewayError('insufficient_balance', 'Insufficient balance: the account cannot cover the maximum cost of this request. Top up, or lower max_tokens.');
      }
      ctx.hold = { id: ctx.requestId, amountNano, inputEstimate, open: true };
    };
  },
};
