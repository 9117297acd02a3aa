/**
 * The token meter (spec 1: chat, responses, messages; DESIGN.md "Reserve, then settle"): one
 * implementation of the meter contract among others. It reserves the input estimate (with a margin)
 * plus the output cap and the built-in tools' caps, and bills what the translator reported: a full
 * answer its reported usage; content delivered before a stream broke (or a client left) the input plus
 * the output delivered, counted with the tokenizer where nothing was reported; nothing delivered,
 * nothing. Each reported built-in tool call is its own row.
 */
import { tokenCharge } from '../billing/pricing.js';
import { quoteAmount, shortfall, shortfallMessage, type HoldQuote } from '../billing/shortfall.js';
import type { CompiledOffering } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { formatUsd } from '../money.js';
import type { TokenReader } from '../formats/types.js';
import type { UsageRowInput } from '../ledger/types.js';
import { countTextTokens } from '../tokenize.js';
import type { TokenUsage } from '../translate/types.js';
import type { Bill, Demand, Meter, MeterContext, MeterMetrics, MeterOutcome, Quote } from './types.js';

/**
 * The usage to bill for an outcome, or null when nothing is billable. A full answer pays what the
 * upstream reported. A partial one pays the input (as reported up front, else the estimate) and
 * the larger of the output reported so far and the tokenizer's count of what was delivered.
 */
export function billableUsage(outcome: MeterOutcome, inputEstimate: number): TokenUsage | null {
  if (outcome.delivery === 'none') return null;
  const reported = reportedTokens(outcome);
  if (outcome.delivery === 'full' && reported) return reported;
  const delivered = countTextTokens(outcome.deliveredText);
  if (reported) return { ...reported, output: Math.max(reported.output, delivered) };
  return { input: inputEstimate, output: delivered, cachedInput: 0, cacheWrite: 0, reasoning: 0 };
}

/**
 * What the translator reported, read as token usage: the meter owns `outcome.reported` (the pipeline
 * passes it through untyped), and the translators of a token-metered route report TokenUsage
 * (src/translate/types.ts).
 */
function reportedTokens(outcome: MeterOutcome): TokenUsage | null {
  return (outcome.reported ?? null) as TokenUsage | null;
}

/**
 * What marks a row whose counts the gateway estimated (a stream cut short, or a vendor that reported no
 * usage): never billed at zero, and said so (issue 32 item 1: `estimated: true`).
 */
const ESTIMATED = { counted_by: 'gateway_tokenizer', estimated: true } as const;

/**
 * The token usage row of one request (kind `tokens`, details with every count), tagged with the
 * caller's key. `model` is the offering's id, also when the client asked for an alias (issue 31 item 4).
 */
export function tokenRow(ctx: MeterContext, usage: TokenUsage, offering: CompiledOffering, estimated: boolean): UsageRowInput {
  return {
    requestId: ctx.requestId, keyId: ctx.auth?.keyId ?? null, model: offering.id, kind: 'tokens', unit: 'token',
    quantity: BigInt(usage.input + usage.output), amountNano: tokenCharge(usage, offering),
    details: {
      input: usage.input, output: usage.output, cached: usage.cachedInput, cache_write: usage.cacheWrite,
      reasoning: usage.reasoning, ...(usage.imageInput !== undefined ? { image_input: usage.imageInput } : {}), ...(estimated ? ESTIMATED : {}),
    },
  };
}

/**
 * One usage row per reported built-in tool call (spec 2 "Billing usage rows", 4.3), priced per call
 * from the catalogue, so each is auditable and refundable on its own. Unpriced tools were refused
 * at admission; a price missing after a reload bills the call at zero rather than failing settlement.
 */
export function toolRows(ctx: MeterContext, usage: TokenUsage, offering: CompiledOffering): UsageRowInput[] {
  const rows: UsageRowInput[] = [];
  for (const [name, calls] of Object.entries(usage.toolCalls ?? {})) {
    for (let i = 0; i < calls; i++) {
      rows.push({ requestId: ctx.requestId, keyId: ctx.auth?.keyId ?? null, model: offering.id, kind: name, unit: 'call', quantity: 1n, amountNano: offering.billing.tools[name] ?? 0n, details: { call: i + 1, of: calls } });
    }
  }
  return rows;
}

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

/**
 * A reader for a format that cannot size requests in tokens, used with a declared input estimate
 * (e.g. audio tokens from the measured duration, spec 4.8): no output cap, no tools.
 */
export const NO_TOKEN_SIZING: TokenReader = {
  estimateInputTokens: () => 0, inputParam: null, requestedMaxOutput: () => null, maxOutputParam: () => 'max_output_tokens', billableTools: () => ({}),
};

/** A route's declared input estimate (its `reserve`): the tokens it reads from the request, and the field it reads them from. */
export interface InputEstimate {
  tokens(ctx: MeterContext): number;
  param: string | null;
}

/**
 * The token meter of a route whose client format sizes requests with `reader`; `estimate`, when the
 * route declares a `reserve`, replaces the reader's input estimate (read from the request and its files);
 * `outputTimes`, the route's `output_times`, multiplies the model's output allowance (per image, spec 4.14).
 */
export function tokenMeter(reader: TokenReader, estimate?: InputEstimate, costHeader?: string, outputTimes?: (ctx: MeterContext) => number): Meter {
  return {
    unit: 'token',

    // A cap above what the model can produce is refused, never clamped (issue 8 item 6).
    check(ctx, offering = ctx.model!.offering) {
      const requested = reader.requestedMaxOutput(ctx.body);
      if (requested === null || requested <= offering.maxOutputTokens) return;
      const param = reader.maxOutputParam(ctx.body);
      throw new GatewayError('invalid_request', `${param} is ${requested}, above the ${offering.maxOutputTokens} output tokens model "${offering.id}" can produce.`, { param });
    },

    // The limiter's token limit counts the input and the output the client asked for (corrected to the
    // usage after); the input alone is the floor, and the estimate the quote reserves for.
    demand(ctx): Demand {
      const inputTokens = estimate ? estimate.tokens(ctx) : reader.estimateInputTokens(ctx.body);
      const floorParam = estimate ? estimate.param : reader.inputParam;
      const answers = reader.answerCount?.(ctx.body) ?? 1;
      return { limiterUnits: inputTokens + (reader.requestedMaxOutput(ctx.body) ?? 0) * answers, limiterFloor: inputTokens, floorParam };
    },

    quote(ctx, demand, offering = ctx.model!.offering): Quote {
      // A token demand's floor is its input estimate (demand above): counted once.
      const inputEstimate = demand.limiterFloor;
      const hold: HoldQuote = {
        // `output_times` (spec 4.14 images): the model's max_output_tokens is per image asked for.
        // `n` answers (chat completions): each may reach the cap, so all of them are reserved for.
        inputEstimate, maxOutput: (reader.requestedMaxOutput(ctx.body) ?? offering.maxOutputTokens * (outputTimes?.(ctx) ?? 1)) * (reader.answerCount?.(ctx.body) ?? 1),
        toolsNano: toolCap(reader.billableTools(ctx.body), offering), marginPercent: ctx.gateway.settings.inputMarginPercent, offering,
      };
      // The route's param defaults are in ctx.body; the client's own body tells whether it set the cap.
      const cap = { param: reader.maxOutputParam(ctx.body), clientSet: reader.requestedMaxOutput(ctx.req.body as Record<string, unknown>) !== null };
      // A request with no output cap of its own (spec 4.8 audio) cannot lower one: the 402 says to top up.
      const refusal = reader === NO_TOKEN_SIZING
        ? (account: { balanceNano: bigint; creditLimitNano: bigint }) => {
          const s = shortfall(hold, account);
          return { message: `Insufficient balance: this request needs $${formatUsd(s.neededNano)} reserved (its input estimate plus the model's ${hold.maxOutput} output tokens); $${formatUsd(s.availableNano)} is available. Top up.`, param: null };
        }
        : (account: { balanceNano: bigint; creditLimitNano: bigint }) => shortfallMessage(shortfall(hold, account), hold, cap);
      const { output } = offering.billing.prices;
      const per = offering.billing.per;
      const streamCeiling = { startNano: quoteAmount(hold, 0), perCharNano: (3n * output + per - 1n) / per };
      return { amountNano: quoteAmount(hold), inputEstimate, refusal, streamCeiling };
    },

    bill(ctx, outcome, inputEstimate): Bill | null {
      const usage = billableUsage(outcome, inputEstimate);
      if (!usage) return null;
      const offering = ctx.model!.offering;
      const counted = outcome.delivery !== 'full' || !reportedTokens(outcome);
      const rows = [tokenRow(ctx, usage, offering, counted), ...toolRows(ctx, usage, offering)];
      const amountNano = rows.reduce((sum, r) => sum + r.amountNano, 0n);
      // `headers: {cost}` on the route's token meter: the settled charge of every row (spec 4.8 audio).
      const headers: Record<string, string> = costHeader ? { [costHeader]: formatUsd(amountNano) } : {};
      const provider = ctx.model!.provider.id;
      const observe = (metrics: MeterMetrics): void => metrics.metered(provider, offering.id, usage, amountNano);
      return { rows, limiterUnits: usage.input + usage.output, observe, headers };
    },
  };
}
