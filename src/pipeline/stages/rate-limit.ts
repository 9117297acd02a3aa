/**
 * Stage 3, rate-limit: admission control before any upstream call. First the request, token and
 * concurrency limits (429, never billed); then, on billable routes, the budget: the request's
 * maximum cost is reserved in one guarded statement (DESIGN.md "Reserve, then settle"): no
 * reservation, 402, no upstream call.
 */
import { holdAmount } from '../../billing/pricing.js';
import type { CompiledOffering } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { admit, scopesOf } from '../../limits/admission.js';
import type { RequestContext } from '../context.js';
import type { Runtime, Stage } from '../stage.js';

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

async function reserve(ctx: RequestContext, runtime: Runtime, inputEstimate: number, maxOutput: number): Promise<void> {
  const { offering } = ctx.model!;
  const settings = ctx.gateway.settings;
  const amountNano = holdAmount(inputEstimate, maxOutput, settings.inputMarginPercent, offering) + toolCap(ctx.format.billableTools(ctx.body), offering);
  const reserved = await runtime.ledger.reserve({ holdId: ctx.requestId, accountId: ctx.auth!.accountId, amountNano, ttlMs: settings.holdTtlMs });
  if (!reserved) {
    throw new GatewayError('insufficient_balance', 'Insufficient balance: the account cannot cover the maximum cost of this request. Top up, or lower max_tokens.');
  }
  ctx.hold = { id: ctx.requestId, amountNano, inputEstimate, open: true };
}

/** Limits every proxy route; reserves on billable ones. */
export const rateLimitStage: Stage = {
  name: 'rate-limit',
  compile: (route, runtime) => {
    if (route.manifest.handler !== 'proxy') return null;
    const billable = route.billable;
    return async (ctx) => {
      const inputEstimate = billable ? ctx.format.estimateInputTokens(ctx.body) : 0;
      const requestedOutput = billable ? ctx.format.requestedMaxOutput(ctx.body) : null;
      // The token limit counts the input and the output the client asked for (corrected to the usage after).
      const tokens = inputEstimate + (requestedOutput ?? 0);
      const ticket = await admit(runtime.limiter, scopesOf(ctx.auth!, ctx.gateway.settings.limits), tokens, inputEstimate, (scope, limit) => runtime.metrics?.limiterRejected(scope as 'account' | 'key', limit as 'requests' | 'tokens' | 'concurrency'));
      ctx.limit = { ticket, billedTokens: 0 };
      if (billable) await reserve(ctx, runtime, inputEstimate, requestedOutput ?? ctx.model!.offering.maxOutputTokens);
    };
  },
};
