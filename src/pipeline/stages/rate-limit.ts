/**
 * Stage 3, rate-limit: admission control before any upstream call. Request and token rate limits
 * are a pass-through for now; the budget is enforced here by reserving the request's maximum cost
 * in one guarded statement (DESIGN.md "Reserve, then settle"): no reservation, 402, no upstream call.
 */
import { holdAmount } from '../../billing/pricing.js';
import type { CompiledOffering } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import type { Stage } from '../stage.js';

/**
 * The most the request's built-in tools can cost: calls x price per call. A billable tool the
 * offering has no price for is refused, so a call can never go unbilled (spec 4.3).
 */
function toolCap(tools: Record<string, number>, offering: CompiledOffering): bigint {
  let total = 0n;
  for (const [name, calls] of Object.entries(tools)) {
    const price = offering.billing.tools[name];
    if (price === undefined) throw new GatewayError('tool_not_available', `The ${name} tool is not available on model "${offering.id}".`, { param: 'tools' });
    total += BigInt(calls) * price;
  }
  return total;
}

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
      const amountNano = holdAmount(inputEstimate, maxOutput, settings.inputMarginPercent, offering) + toolCap(ctx.format.billableTools(ctx.body), offering);
      const reserved = await runtime.ledger.reserve({ holdId: ctx.requestId, accountId: ctx.auth!.accountId, amountNano, ttlMs: settings.holdTtlMs });
      if (!reserved) {
        throw new GatewayError('insufficient_balance', 'Insufficient balance: the account cannot cover the maximum cost of this request. Top up, or lower max_tokens.');
      }
      ctx.hold = { id: ctx.requestId, amountNano, inputEstimate, open: true };
    };
  },
};
