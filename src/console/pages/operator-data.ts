/**
 * What the operator view reads (issue 13 item 5): every account with its console email, balances and
 * open holds, one account by id, and which of a page of usage rows are refunded already. Balances are
 * the ledger's own columns (src/ledger/ledger.ts ACCOUNT_VIEW): `balance` is spendable, holds taken off.
 */
import type { UsageRow } from '../../ledger/types.js';
import type { Db } from '../../store/db.js';

/** An account as the operator's table lists it. */
export interface AccountListing {
  id: string;
  /** The console user's email; null for an account made through the admin API. */
  email: string | null;
  balanceNano: bigint;
  creditLimitNano: bigint;
  heldNano: bigint;
  openHolds: number;
  createdAt: Date;
}

interface Row { id: string; email: string | null; balance: string; credit: string; held: string; open_holds: number; created_at: Date }

// Credit grants (issue 30) are counted as the balance they came from, not as holds: the operator's
// table shows what each account has and what its requests in flight hold.
const SELECT = `SELECT a.id, u.email, (a.balance_nano + g.granted)::text AS balance, a.credit_limit_nano::text AS credit,
  (a.held_nano - g.granted)::text AS held, g.request_holds AS open_holds, a.created_at
FROM accounts a LEFT JOIN console_users u ON u.account_id = a.id,
  LATERAL (SELECT coalesce(sum(h.amount_nano) FILTER (WHERE h.kind = 'grant'), 0) AS granted,
                  (count(*) FILTER (WHERE h.kind = 'request'))::int AS request_holds
           FROM holds h WHERE h.account_id = a.id AND h.closed_at IS NULL) g`;

function listing(r: Row): AccountListing {
  return {
    id: r.id, email: r.email, balanceNano: BigInt(r.balance), creditLimitNano: BigInt(r.credit), heldNano: BigInt(r.held),
    openHolds: Number(r.open_holds), createdAt: new Date(r.created_at),
  };
}

/**
 * Accounts, newest first, at most `limit`; `search` (already trimmed) keeps those whose id or email
 * contains it, case-insensitively. `total` counts the matching accounts, shown or not.
 */
export async function listAccounts(db: Db, search: string, limit: number): Promise<{ accounts: AccountListing[]; total: number }> {
  const filter = search ? "WHERE position($1 in lower(a.id || ' ' || coalesce(u.email, ''))) > 0" : '';
  const params = search ? [search.toLowerCase()] : [];
  const rows = await db.query<Row>(`${SELECT} ${filter} ORDER BY a.created_at DESC, a.id DESC LIMIT ${Math.floor(limit)}`, params);
  const [count] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM accounts a LEFT JOIN console_users u ON u.account_id = a.id ${filter}`, params);
  return { accounts: rows.map(listing), total: Number(count?.n ?? 0) };
}

/** One account, or null. */
export async function findAccount(db: Db, id: string): Promise<AccountListing | null> {
  const [row] = await db.query<Row>(`${SELECT} WHERE a.id = $1`, [id]);
  return row ? listing(row) : null;
}

/**
 * The ids among `rows` (one account's, newest first) that have a refund row. A refund row is written
 * after its original, so its `refund_of` is at least the oldest id shown: one range of the account's rows.
 */
export async function refundedAmong(db: Db, accountId: string, rows: readonly UsageRow[]): Promise<Set<string>> {
  const oldest = rows[rows.length - 1]?.id;
  if (oldest === undefined) return new Set();
  const found = await db.query<{ refund_of: string }>(
    'SELECT refund_of FROM usage_rows WHERE account_id = $1 AND refund_of IS NOT NULL AND refund_of >= $2', [accountId, oldest],
  );
  return new Set(found.map((r) => r.refund_of));
}
