/** Shapes of the ledger API (re-exported by ledger.ts). All money is integer nano-USD in bigint. */

/** An account as the gateway sees it. `balanceNano` is spendable: open holds are already taken off. */
export interface AccountView {
  id: string;
  balanceNano: bigint;
  creditLimitNano: bigint;
  heldNano: bigint;
  openHolds: number;
  /** The part of heldNano that is credit grants (issue 30), and how many of the open holds they are. */
  grantedNano: bigint;
  openGrants: number;
}

/**
 * The account as its user sees it: credit grants (issue 30) are this gateway's headroom, not money
 * spent or held for a request, so their unspent amount counts as balance and they are not holds.
 */
export function asUserSees(a: AccountView): AccountView {
  return { ...a, balanceNano: a.balanceNano + a.grantedNano, heldNano: a.heldNano - a.grantedNano, openHolds: a.openHolds - a.openGrants, grantedNano: 0n, openGrants: 0 };
}

/** One charge to write at settle time (a token line, a web-search call, ...). */
export interface UsageRowInput {
  requestId: string;
  model: string;
  /** 'tokens' | 'web_search' | ... ; 'refund' is reserved for refund rows. */
  kind: string;
  quantity: bigint;
  /** 'token' | 'call' | ... */
  unit: string;
  amountNano: bigint;
  details: Record<string, unknown>;
  /**
   * The API key that spent it (its id, as the keys API returns it); absent or null when the charge did
   * not come through a key (the ledger called directly). Optional so that such callers need not say so.
   */
  keyId?: string | null;
  /**
   * The deployment that served it (issue 29 item 7: its id, e.g. `openai/gpt-4o` or one the operator
   * chose); absent or null when the charge was not written through a deployment. Optional, as keyId.
   */
  deployment?: string | null;
}

/**
 * A stored usage row (append-only). Refund rows have kind 'refund', a negative amount and refundOf,
 * and the keyId and deployment of the row they refund. keyId is null for rows written before
 * migration 004, deployment for rows written before migration 012.
 */
export interface UsageRow extends UsageRowInput {
  id: string;
  accountId: string;
  keyId: string | null;
  deployment: string | null;
  refundOf: string | null;
  createdAt: Date;
}

/** Per account: opening + topups - balance == usage - refunds + openHolds; difference = left - right. */
export interface ReconcileLine {
  accountId: string;
  openingNano: bigint;
  topupsNano: bigint;
  balanceNano: bigint;
  usageNano: bigint;
  refundsNano: bigint;
  openHoldsNano: bigint;
  differenceNano: bigint;
}

/** A refused ledger operation, with a stable machine-readable code. */
export class LedgerError extends Error {
  constructor(
    readonly code: 'not_found' | 'already_refunded' | 'invalid_amount',
    message: string,
  ) {
    super(message);
    this.name = 'LedgerError';
  }
}

/** Reads a bigint column (a decimal string from either driver, or a bigint). */
export function toBig(value: unknown): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'string' || typeof value === 'number') return BigInt(value);
  throw new TypeError(`expected an integer column, got ${typeof value}`);
}
