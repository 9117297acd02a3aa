/** JSON shapes of the admin API: ledger values rendered with money as decimal USD strings. */
import type { AccountView, ReconcileLine, UsageRow } from '../ledger/ledger.js';
import type { OpenHold } from '../ledger/open-holds.js';
import { formatUsd, parseUsd } from '../money.js';
import { AdminError } from './errors.js';

/** Largest value a bigint column holds. */
const INT64_MAX = 2n ** 63n - 1n;

/** An account as returned by GET /admin/accounts/:id and the top-up route. */
export function accountJson(a: AccountView) {
  return {
    id: a.id,
    balance_usd: formatUsd(a.balanceNano),
    credit_limit_usd: formatUsd(a.creditLimitNano),
    held_usd: formatUsd(a.heldNano),
    // issue 30: the part of held_usd that is credit grants (replicas' headroom, not spent).
    granted_usd: formatUsd(a.grantedNano),
    open_holds: a.openHolds,
  };
}

/** An open hold as GET /admin/accounts/:id/holds lists it. */
export function holdJson(h: OpenHold) {
  return { id: h.id, kind: h.kind, amount_usd: formatUsd(h.amountNano), created_at: h.createdAt.toISOString(), expires_at: h.expiresAt.toISOString() };
}

/**
 * The quantity in the row's unit. A meter billing in fractions of its unit (route `step`, e.g. 0.5 s)
 * stores whole steps and the decimal in `details.quantity`; the API shows the decimal (a 0.5 s sound
 * effect is quantity 0.5, unit second).
 */
function billedQuantity(r: UsageRow): number {
  const decimal = r.details.quantity;
  return r.details.step !== undefined && typeof decimal === 'string' && /^\d+(\.\d+)?$/.test(decimal) ? Number(decimal) : Number(r.quantity);
}

/**
 * A usage (or refund) row. `quantity` is a JSON number; `key_id` is null when no key spent it,
 * `deployment` (issue 29 item 7) when no deployment served it (a refund has its row's).
 */
export function usageJson(r: UsageRow) {
  return {
    id: r.id,
    key_id: r.keyId,
    deployment: r.deployment,
    request_id: r.requestId,
    model: r.model,
    kind: r.kind,
    quantity: billedQuantity(r),
    unit: r.unit,
    amount_usd: formatUsd(r.amountNano),
    details: r.details,
    refund_of: r.refundOf,
    created_at: r.createdAt.toISOString(),
  };
}

/** One reconcile line. */
export function reconcileJson(l: ReconcileLine) {
  return {
    account_id: l.accountId,
    opening_usd: formatUsd(l.openingNano),
    topups_usd: formatUsd(l.topupsNano),
    balance_usd: formatUsd(l.balanceNano),
    usage_usd: formatUsd(l.usageNano),
    refunds_usd: formatUsd(l.refundsNano),
    open_holds_usd: formatUsd(l.openHoldsNano),
    difference_usd: formatUsd(l.differenceNano),
  };
}

/**
 * Parses a money field of a request body into nano-USD; invalid_amount (with `param`) when it is not a
 * decimal with at most 9 decimals, is out of range, or breaks `rule`.
 */
export function moneyField(value: string, param: string, rule: 'any' | 'non_negative' | 'positive'): bigint {
  let nano: bigint;
  try {
    nano = parseUsd(value);
  } catch {
    throw new AdminError('invalid_amount', `${param} must be a decimal USD amount with at most 9 decimals`, param);
  }
  if (nano > INT64_MAX || nano < -INT64_MAX) throw new AdminError('invalid_amount', `${param} is out of range`, param);
  if (rule === 'non_negative' && nano < 0n) throw new AdminError('invalid_amount', `${param} must be >= 0`, param);
  if (rule === 'positive' && nano <= 0n) throw new AdminError('invalid_amount', `${param} must be > 0`, param);
  return nano;
}

const idString = { type: 'string', minLength: 1, maxLength: 200 } as const;

/** The params schema of a route with one id parameter. */
export function paramsSchema(name: string) {
  return { type: 'object', properties: { [name]: idString }, required: [name], additionalProperties: false };
}
