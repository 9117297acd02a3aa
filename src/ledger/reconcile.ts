/**
 * The billing invariant, per account, from one SQL snapshot:
 *   opening + topups - balance == usage - refunds + open holds
 * usage = sum of charge rows, refunds = minus the sum of refund rows (so a positive number),
 * open holds = sum of holds not yet closed. difference = left - right; 0 when the books balance.
 */
import type { Db } from '../store/db.js';
import { toBig, type ReconcileLine } from './types.js';

const RECONCILE = `
SELECT a.id, a.opening_nano::text AS opening, a.balance_nano::text AS balance,
  coalesce(t.total, 0)::text AS topups,
  coalesce(u.charged, 0)::text AS usage,
  coalesce(u.refunded, 0)::text AS refunds,
  coalesce(h.total, 0)::text AS open_holds
FROM accounts a
LEFT JOIN (SELECT account_id, sum(amount_nano) AS total FROM topups GROUP BY account_id) t
  ON t.account_id = a.id
LEFT JOIN (
  SELECT account_id,
    sum(amount_nano) FILTER (WHERE refund_of IS NULL) AS charged,
    -sum(amount_nano) FILTER (WHERE refund_of IS NOT NULL) AS refunded
  FROM usage_rows GROUP BY account_id
) u ON u.account_id = a.id
LEFT JOIN (
  SELECT account_id, sum(amount_nano) AS total FROM holds WHERE closed_at IS NULL GROUP BY account_id
) h ON h.account_id = a.id
ORDER BY a.id`;

interface Row {
  id: string;
  opening: string;
  balance: string;
  topups: string;
  usage: string;
  refunds: string;
  open_holds: string;
}

/** One line per account; check `differenceNano === 0n`. */
export async function reconcile(db: Db): Promise<ReconcileLine[]> {
  const rows = await db.query<Row>(RECONCILE);
  return rows.map((r) => {
    const openingNano = toBig(r.opening);
    const topupsNano = toBig(r.topups);
    const balanceNano = toBig(r.balance);
    const usageNano = toBig(r.usage);
    const refundsNano = toBig(r.refunds);
    const openHoldsNano = toBig(r.open_holds);
    const differenceNano = openingNano + topupsNano - balanceNano - (usageNano - refundsNano + openHoldsNano);
    return { accountId: r.id, openingNano, topupsNano, balanceNano, usageNano, refundsNano, openHoldsNano, differenceNano };
  });
}
