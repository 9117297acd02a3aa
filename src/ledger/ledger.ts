/**
 * The ledger: accounts, keys, holds, usage rows, refunds and reconciliation over one Db (PGlite or
 * PostgreSQL). Money is integer nano-USD bigint throughout; every money movement is one guarded
 * statement or one transaction, safe under concurrent callers and across gateway replicas.
 */
import type { Limits } from '../limits/types.js';
import type { Db, Queryable } from '../store/db.js';
import { randomId } from './ids.js';
import { DependencyUnavailableError } from '../errors.js';
import { Holds } from './holds.js';
import { ReleaseBacklog } from './release-backlog.js';
import * as keys from './keys.js';
import { keyDetails, reserveOnKey, updateControls, type KeyControls, type KeyControlsPatch, type KeyDetails, type KeyReserveStatus } from './key-controls.js';
import { listOpenHolds, type OpenHold } from './open-holds.js';
import { reconcile } from './reconcile.js';
import * as usage from './usage.js';
import { LedgerError, toBig, type AccountView, type ReconcileLine, type UsageRow, type UsageRowInput } from './types.js';

export { LedgerError, type AccountView, type ReconcileLine, type UsageRow, type UsageRowInput } from './types.js';

const ACCOUNT_VIEW = `
SELECT a.id, a.balance_nano, a.credit_limit_nano, a.held_nano,
  (SELECT count(*) FROM holds h WHERE h.account_id = a.id AND h.closed_at IS NULL)::int AS open_holds,
  g.granted_nano, g.open_grants
FROM accounts a,
  LATERAL (SELECT coalesce(sum(h.amount_nano), 0) AS granted_nano, count(*)::int AS open_grants
           FROM holds h WHERE h.account_id = a.id AND h.closed_at IS NULL AND h.kind = 'grant') g
WHERE a.id = $1`;

interface AccountRow {
  id: string;
  balance_nano: unknown;
  credit_limit_nano: unknown;
  held_nano: unknown;
  open_holds: number;
  granted_nano: unknown;
  open_grants: number;
}

async function accountView(q: Queryable, accountId: string): Promise<AccountView | null> {
  const row = (await q.query<AccountRow>(ACCOUNT_VIEW, [accountId]))[0];
  if (!row) return null;
  return {
    id: row.id,
    balanceNano: toBig(row.balance_nano),
    creditLimitNano: toBig(row.credit_limit_nano),
    heldNano: toBig(row.held_nano),
    openHolds: Number(row.open_holds),
    grantedNano: toBig(row.granted_nano),
    openGrants: Number(row.open_grants),
  };
}

function isBig(value: unknown): value is bigint {
  return typeof value === 'bigint';
}

/** The money API the pipeline, admin routes and cron jobs use. */
export class Ledger {
  private readonly holds: Holds;

  private readonly backlog: ReleaseBacklog;

  constructor(private readonly db: Db) {
    this.holds = new Holds(db);
    this.backlog = new ReleaseBacklog((holdId) => this.holds.release(holdId));
  }

  /** Creates an account with an opening balance (default 0) and credit limit (default 0, >= 0). */
  async createAccount(input: { balanceNano?: bigint; creditLimitNano?: bigint }): Promise<{ id: string }> {
    const balance = input.balanceNano ?? 0n;
    const creditLimit = input.creditLimitNano ?? 0n;
    if (!isBig(balance) || !isBig(creditLimit) || creditLimit < 0n) {
      throw new LedgerError('invalid_amount', 'balance must be a bigint and credit limit a bigint >= 0');
    }
    const id = randomId('acct_');
    await this.db.query(
      'INSERT INTO accounts (id, opening_nano, balance_nano, credit_limit_nano) VALUES ($1, $2, $2, $3)',
      [id, balance, creditLimit],
    );
    return { id };
  }

  /** Issues a new key (optionally named) for the account (shown once); not_found if the account does not exist. */
  createKey(accountId: string, name: string | null = null, controls?: KeyControls): Promise<{ id: string; key: string }> {
    return keys.createKey(this.db, accountId, name, controls);
  }

  /** Changes a key's controls (issue 33 item 2; absent fields kept, null clears); with `accountId`, only that account's key. */
  updateKeyControls(keyId: string, patch: KeyControlsPatch, accountId?: string): Promise<KeyControls> {
    return updateControls(this.db, keyId, patch, accountId);
  }

  /** A key, its controls and its budget window of the period `now` falls in; null if unknown (or, with `accountId`, another's). */
  getKey(keyId: string, now: Date, accountId?: string): Promise<KeyDetails | null> {
    return keyDetails(this.db, keyId, now, accountId);
  }

  /**
   * The strict reserve of a request made with a key (migration 016): guarded by the key's budget in its
   * period (`now`, the gateway's clock) when it has one, and by the balance, in one transaction.
   */
  reserveOnKey(input: { holdId: string; accountId: string; amountNano: bigint; ttlMs: number; keyId: string; now: Date }): Promise<KeyReserveStatus> {
    return reserveOnKey(this.db, input);
  }

  /**
   * New key (new id, same name) for the same account; the old key is revoked in the same transaction.
   * With `accountId`, only a key of that account (the console: another account's key is not_found).
   */
  rotateKey(keyId: string, accountId?: string): Promise<{ id: string; key: string }> {
    return keys.rotateKey(this.db, keyId, accountId);
  }

  /** Revokes a key; not_found if unknown, or with `accountId` another account's. */
  deleteKey(keyId: string, accountId?: string): Promise<void> {
    return keys.deleteKey(this.db, keyId, accountId);
  }

  /** The account and key of a live key, by digest; null otherwise. */
  authenticate(key: string): Promise<keys.AuthenticatedKey | null> {
    return keys.authenticate(this.db, key);
  }

  /** Sets or (null) clears an account's limits override; not_found if unknown. */
  setAccountLimits(accountId: string, limits: Limits | null): Promise<void> {
    return keys.setLimits(this.db, 'accounts', accountId, limits);
  }

  /** Sets or (null) clears a key's own limits; not_found if unknown. */
  setKeyLimits(keyId: string, limits: Limits | null): Promise<void> {
    return keys.setLimits(this.db, 'api_keys', keyId, limits);
  }

  /** Adds a positive amount to the balance and appends a topups row; not_found for an unknown account. */
  async topUp(accountId: string, amountNano: bigint): Promise<AccountView> {
    if (!isBig(amountNano) || amountNano <= 0n) throw new LedgerError('invalid_amount', 'top-up must be a bigint > 0');
    return this.db.transaction(async (tx) => {
      const rows = await tx.query(
        `WITH t AS (
           INSERT INTO topups (id, account_id, amount_nano) SELECT $1, a.id, $3::bigint FROM accounts a WHERE a.id = $2
           RETURNING account_id, amount_nano
         )
         UPDATE accounts a SET balance_nano = a.balance_nano + t.amount_nano FROM t WHERE a.id = t.account_id
         RETURNING a.id`,
        [randomId('top_'), accountId, amountNano],
      );
      if (!rows.length) throw new LedgerError('not_found', `account ${accountId} not found`);
      return (await accountView(tx, accountId))!;
    });
  }

  /** The account's balances and open-hold count, or null. */
  getAccount(accountId: string): Promise<AccountView | null> {
    return accountView(this.db, accountId);
  }

  /**
   * One guarded debit: succeeds only if balance - amount >= -credit_limit; then the amount moves
   * from balance to held. Returns false (nothing written) when it does not fit or the account is unknown.
   * Reserves, settles and releases are group-committed (see holds.ts).
   */
  reserve(input: { holdId: string; accountId: string; amountNano: bigint; ttlMs: number }): Promise<boolean> {
    return this.holds.reserve(input);
  }

  /** Closes the hold (giving back what is still held), appends the rows and charges their sum. */
  settle(input: { holdId: string; accountId: string; rows: UsageRowInput[] }): Promise<UsageRow[]> {
    return this.holds.settle(input);
  }

  /**
   * Keeps an open hold alive for another `ttlMs` (long streams) and records, when given, the usage of
   * what was delivered so far (settled by the sweeper after a crash); false if it is closed or unknown.
   */
  extendHold(holdId: string, ttlMs: number, delivered?: { accountId: string; rows: UsageRowInput[] }): Promise<boolean> {
    return this.holds.extend(holdId, ttlMs, delivered);
  }

  /** Closes an open hold and gives it back; no usage row. Idempotent. */
  release(holdId: string): Promise<void> {
    return this.holds.release(holdId);
  }

  /**
   * release(), except that while the store is unreachable the hold is kept in a backlog and released
   * once it answers again, so the caller neither waits for the store nor fails (issue 8 item 3).
   */
  async releaseOrDefer(holdId: string): Promise<void> {
    try {
      await this.holds.release(holdId);
    } catch (error) {
      if (!(error instanceof DependencyUnavailableError)) throw error;
      this.backlog.add(holdId);
    }
  }

  /** Stops background work; the sweeper gives back whatever is left in the backlog. */
  close(): void {
    this.backlog.close();
  }

  /** Closes every open hold whose expires_at < now (settling its delivered checkpoint, if any); returns how many. */
  sweepExpiredHolds(): Promise<number> {
    return this.holds.sweepExpired();
  }

  /** Whether the sweeper would find an expired open hold now. */
  hasExpiredHolds(): Promise<boolean> {
    return this.holds.anyExpired();
  }

  /** The account's open holds (request reserves and credit grants), oldest first. */
  listOpenHolds(accountId: string): Promise<OpenHold[]> {
    return listOpenHolds(this.db, accountId);
  }

  /** Newest first; `after` is the `next` of the previous page; limit default 50, max 500; `keyId` keeps one key's rows. */
  listUsage(accountId: string, opts: { limit?: number; after?: string; keyId?: string } = {}): Promise<{ data: UsageRow[]; next: string | null }> {
    return usage.listUsage(this.db, accountId, opts);
  }

  /** Appends a 'refund' row (minus the original amount) and gives the amount back; once per row. */
  refund(rowId: string): Promise<UsageRow> {
    return usage.refund(this.db, rowId);
  }

  /** Per account: opening + topups - balance vs usage - refunds + open holds, from one snapshot. */
  reconcile(): Promise<ReconcileLine[]> {
    return reconcile(this.db);
  }
}
