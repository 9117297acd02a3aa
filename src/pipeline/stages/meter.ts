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

/**
 * The usage to bill for an outcome, or null when nothing is billable. A full answer pays what the
 * upstream reported. A partial one pays the input (as reported up front, else the estimate) and
 * the larger of the output reported so far and the tokenizer's count of what was delivered.
 */
export function billableUsage(outcome: ForwardOutcome, inputEstimate: number): TokenUsage | null {
  if (outcome.delivery === 'none') return null;
  const reported = outcome.reported;
  if (outcome.delivery === 'full' && reported) return reported;
  const delivered = countTextTokens(outcome.deliveredText);
  if (reported) return { ...reported, output: Math.max(reported.output, delivered) };
  return { input: inputEstimate, output: delivered, cachedInput: 0, cacheWrite: 0, reasoning: 0 };
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

/**
 * One usage row per reported built-in tool call (spec 2 "Billing usage rows", 4.3), priced per call
 * from the catalogue, so each is auditable and refundable on its own. Unpriced tools were refused
 * at admission; a price missing after a reload bills the call at zero rather than failing settlement.
 */
export function toolRows(ctx: RequestContext, usage: TokenUsage, offering: CompiledOffering): UsageRowInput[] {
  const rows: UsageRowInput[] = [];
  for (const [name, calls] of Object.entries(usage.toolCalls ?? {})) {
    for (let i = 0; i < calls; i++) {
      rows.push({ requestId: ctx.requestId, model: offering.id, kind: name, unit: 'call', quantity: 1n, amountNano: offering.billing.tools[name] ?? 0n, details: { call: i + 1, of: calls } });
    }
  }
  return rows;
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
      const offering = ctx.model!.offering;
      if (ctx.limit) ctx.limit.billedTokens = usage.input + usage.output;
      const counted = ctx.outcome!.delivery !== 'full' || !ctx.outcome!.reported;
      const rows = [tokenRow(ctx, usage, offering, counted), ...toolRows(ctx, usage, offering)];
      await runtime.ledger.settle({ holdId: hold.id, accountId: ctx.auth!.accountId, rows });
      runtime.metrics?.metered(ctx.model!.provider.id, offering.id, usage, rows.reduce((sum, r) => sum + r.amountNano, 0n));
    };
  },
};
