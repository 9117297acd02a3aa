/**
 * Why a reservation was refused, in figures the client can act on (issue 8 item 6): what the hold
 * needed, what the account had, and the largest output cap that would have fitted, found from the
 * same holdAmount the reservation used, so the advice is exact to the nano.
 */
import type { CompiledOffering } from '../config/types.js';
import { formatUsd } from '../money.js';
import { holdAmount } from './pricing.js';

/** What a reservation priced (kept to explain a refusal). */
export interface HoldQuote {
  inputEstimate: number;
  /** The output cap the hold priced (the client's, a route default, or the model's cap). */
  maxOutput: number;
  /** The built-in tools' share of the hold (calls x price per call). */
  toolsNano: bigint;
  marginPercent: bigint;
  offering: CompiledOffering;
}

/** The figures of a refused reservation. */
export interface Shortfall {
  neededNano: bigint;
  /** Balance plus credit limit (open holds are already out of the balance); never below 0. */
  availableNano: bigint;
  /** The largest output cap in 1..maxOutput whose hold fits `availableNano`; 0 when not even 1 fits. */
  fittingOutput: number;
}

/** The amount to reserve for `hold`, or for the same request at another output cap. */
export function quoteAmount(hold: HoldQuote, maxOutput = hold.maxOutput): bigint {
  return holdAmount(hold.inputEstimate, maxOutput, hold.marginPercent, hold.offering) + hold.toolsNano;
}

/**
 * The shortfall of a refused hold against what the account has. holdAmount is non-decreasing in
 * the output cap, so a binary search over it finds the largest cap that fits, with no inverse
 * formula to drift from it.
 */
export function shortfall(hold: HoldQuote, account: { balanceNano: bigint; creditLimitNano: bigint }): Shortfall {
  const available = account.balanceNano + account.creditLimitNano;
  const availableNano = available > 0n ? available : 0n;
  let lo = 0;
  let hi = hold.maxOutput;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (quoteAmount(hold, mid) <= availableNano) lo = mid;
    else hi = mid - 1;
  }
  return { neededNano: quoteAmount(hold), availableNano, fittingOutput: lo };
}

/** How the client set the output cap, for the wording: its own value, or one it left to us. */
export interface OutputCapSource {
  /** The client's name for it (`max_tokens`, `max_completion_tokens`, `max_output_tokens`). */
  param: string;
  /** Whether the client set it; if not, the hold priced a route default or the model's cap. */
  clientSet: boolean;
}

const usd = (nano: bigint): string => `$${formatUsd(nano)}`;

/**
 * The 402 message and its `param` (spec 7: 402, no available credits). `param` names the output
 * cap only when lowering it would let the request through.
 */
export function shortfallMessage(s: Shortfall, hold: HoldQuote, cap: OutputCapSource): { message: string; param: string | null } {
  const output = cap.clientSet ? `${cap.param} ${hold.maxOutput} of output` : `${hold.maxOutput} output tokens, the default when ${cap.param} is not set`;
  const tools = hold.toolsNano > 0n ? ` and ${usd(hold.toolsNano)} of built-in tool calls` : '';
  const head = `Insufficient balance: this request needs ${usd(s.neededNano)} reserved (its input estimate plus ${output}${tools}); ${usd(s.availableNano)} is available.`;
  // Another request's hold may have closed between the refusal and the account read.
  if (s.fittingOutput >= hold.maxOutput) return { message: `${head} Retry, or top up.`, param: null };
  if (s.fittingOutput === 0) return { message: `${head} That is not enough even for ${cap.param} 1: top up.`, param: null };
  const verb = cap.clientSet ? 'Lower' : 'Set';
  return { message: `${head} ${verb} ${cap.param} to ${s.fittingOutput} or less, or top up.`, param: cap.param };
}
