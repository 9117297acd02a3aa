/**
 * Stage 6, meter: settles the reservation to usage rows, or releases it. What each outcome costs
 * (spec 1, 4.1 rules 1-2): a full answer pays its reported usage; content that reached the client
 * before the stream broke or the client left pays input plus the output delivered (tokenizer counts
 * where the upstream reported nothing); nothing delivered pays nothing.
 */
import { tokenCharge } from '../../billing/pricing.js';
import type { CompiledOffering } from '../../config/types.js';
import type { UsageRowInput } from '../../ledger/ledger.js';
import { countTextTokens } from '../../tokenize.js';
import type { TokenUsage } from '../../translate/types.js';
import type { ForwardOutcome, RequestContext } from '../context.js';
import type { Stage } from '../stage.js';

/** The usage to bill for an outcome, or null when nothing is billable. */
export function billableUsage(outcome: ForwardOutcome, inputEstimate: number): TokenUsage | null {
  if (outcome.delivery === 'none') return null;
  if (outcome.reported) return outcome.reported;
  return { input: inputEstimate, output: countTextTokens(outcome.deliveredText), cachedInput: 0, cacheWrite: 0, reasoning: 0 };
}

/** The token usage row of one request (kind `tokens`, details with every count). */
export function tokenRow(ctx: RequestContext, usage: TokenUsage, offering: CompiledOffering, estimated: boolean): UsageRowInput {
  return {
    requestId: ctx.requestId, model: offering.id, kind: 'tokens', unit: 'token',
    quantity: BigInt(usage.input + usage.output), amountNano: tokenCharge(usage, offering),
    details: {
      input: usage.input, output: usage.output, cached: usage.cachedInput, cache_write: usage.cacheWrite,
      reasoning: usage.reasoning, ...(estimated ? { counted_by: 'gateway_tokenizer' } : {}),
    },
  };
}

/** Settles billable proxy routes. */
export const meterStage: Stage = {
  name: 'meter',
  compile: (route, runtime) => {
    if (!route.billable || route.manifest.handler !== 'proxy') return null;
    return async (ctx) => {
      const hold = ctx.hold;
      if (!hold || !hold.open) return;
      // A client that left before the first byte of the answer pays nothing.
      const left = ctx.clientGone.signal.aborted && !ctx.started;
      const usage = ctx.outcome && !left ? billableUsage(ctx.outcome, hold.inputEstimate) : null;
      hold.open = false;
      if (!usage) {
        await runtime.ledger.release(hold.id);
        return;
      }
      const row = tokenRow(ctx, usage, ctx.model!.offering, !ctx.outcome!.reported);
      await runtime.ledger.settle({ holdId: hold.id, accountId: ctx.auth!.accountId, rows: [row] });
    };
  },
};
