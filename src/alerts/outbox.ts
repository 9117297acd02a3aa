/**
 * The alerts' durable outbox (issue 33 item 3): an event is one row of alert_events with one
 * delivery row per endpoint subscribed to its type when it was written, in the same statement or
 * transaction as what caused it, so a crash loses none. The deliverer (deliver.ts) sends them at
 * least once; the receiver deduplicates by the event's id.
 */
import { hostname } from 'node:os';
import type { Clock } from '../clock.js';
import { randomId } from '../ledger/ids.js';
import { formatUsd } from '../money.js';
import type { Db, Queryable } from '../store/types.js';
import type { AlertSettings, AlertType } from './settings.js';

/** What an endpoint receives (and the mail is written from). */
export interface AlertEvent {
  id: string;
  type: AlertType;
  created_at: string;
  data: Record<string, unknown>;
}

/** The endpoint of the account's console user for `balance.low` mail. */
export const MAIL_ENDPOINT = 'mail:';

/** This process, as a circuit event names it (each replica keeps its own circuits). */
const REPLICA = `${hostname()}:${process.pid}`;

const INSERT = `WITH e AS (INSERT INTO alert_events (id, type, account_id, body, created_at) VALUES ($1, $2, $3, $4, $5) RETURNING id)
  INSERT INTO alert_deliveries (event_id, endpoint, next_at) SELECT e.id, x, $5 FROM e, unnest($6::text[]) AS x`;

/** An account's (`a`) available money: balance + credit limit + its open grants, which are its own unspent. */
const AVAILABLE = `a.balance_nano + a.credit_limit_nano + coalesce((SELECT sum(h.amount_nano) FROM holds h
  WHERE h.account_id = a.id AND h.kind = 'grant' AND h.closed_at IS NULL), 0)`;

/**
 * Accounts whose available money (balance + credit limit + their open grants, which are theirs
 * unspent) fell below their threshold since they were last alerted: marked, and returned with the
 * console user's address. The rearm below clears the mark of those back at or above it.
 */
const CROSSED = `WITH s AS (
    SELECT a.id, ${AVAILABLE} AS available, coalesce(a.low_balance_nano, $1::bigint) AS threshold
    FROM accounts a WHERE NOT a.low_balance_alerted AND coalesce(a.low_balance_nano, $1::bigint) IS NOT NULL)
  UPDATE accounts a SET low_balance_alerted = true FROM s
  WHERE a.id = s.id AND s.available < s.threshold
  RETURNING a.id, s.available::text AS available, s.threshold::text AS threshold,
            (SELECT u.email FROM console_users u WHERE u.account_id = a.id) AS email`;

const REARM = `UPDATE accounts a SET low_balance_alerted = false
  WHERE a.low_balance_alerted AND (coalesce(a.low_balance_nano, $1::bigint) IS NULL
    OR ${AVAILABLE} >= coalesce(a.low_balance_nano, $1::bigint))`;

/** Keys whose spend in their current period reached their budget since that period began: marked, returned. */
const BUDGETS_REACHED = `UPDATE key_budget_windows w SET budget_alerted = true FROM api_keys k
  WHERE k.id = w.key_id AND NOT w.budget_alerted AND k.budget_nano IS NOT NULL AND w.spent_nano >= k.budget_nano
    AND w.period_start = key_period_start(k.budget_period, $1)
  RETURNING w.key_id, k.account_id, k.budget_period, w.period_start, w.spent_nano::text AS spent, k.budget_nano::text AS budget`;

/** One key's current window, marked when a request was refused for its budget (a spend short of it, the quote over what is left). */
const BUDGET_REFUSED = `UPDATE key_budget_windows w SET budget_alerted = true FROM api_keys k
  WHERE w.key_id = $1 AND k.id = w.key_id AND NOT w.budget_alerted AND k.budget_nano IS NOT NULL
    AND w.period_start = key_period_start(k.budget_period, $2)
  RETURNING w.key_id, k.account_id, k.budget_period, w.period_start, w.spent_nano::text AS spent, k.budget_nano::text AS budget`;

interface BudgetWindow { key_id: string; account_id: string; budget_period: string; period_start: Date; spent: string; budget: string }

/** Writes alert events and answers what the balance check and the admin API need. */
export class AlertOutbox {
  constructor(private readonly db: Db, private readonly clock: Clock, private readonly settings: () => AlertSettings) {}

  /** The webhook URLs subscribed to `type` now. */
  endpointsFor(type: AlertType): string[] {
    return this.settings().webhooks.filter((w) => w.events.includes(type)).map((w) => w.url);
  }

  /**
   * Writes one event for its endpoints (and `extra` ones, e.g. a mail address); nothing when none
   * is subscribed. Answers the event, or null.
   */
  async emit(type: AlertType, data: Record<string, unknown>, opts: { accountId?: string; extra?: string[]; tx?: Queryable } = {}): Promise<AlertEvent | null> {
    const endpoints = [...new Set([...this.endpointsFor(type), ...(opts.extra ?? [])])];
    if (endpoints.length === 0) return null;
    const now = this.clock.now();
    const event: AlertEvent = { id: randomId('evt_'), type, created_at: now.toISOString(), data };
    await (opts.tx ?? this.db).query(INSERT, [event.id, type, opts.accountId ?? null, JSON.stringify(event), now, endpoints]);
    return event;
  }

  /** A circuit opened or closed again on this replica. */
  circuit(deploymentId: string, opened: boolean): Promise<AlertEvent | null> {
    return this.emit(opened ? 'deployment.circuit_opened' : 'deployment.recovered', { deployment: deploymentId, replica: REPLICA });
  }

  /**
   * One balance check (run by one replica at a time): an event per account that crossed its
   * threshold downwards since its last alert (once per crossing), written with the mark in one
   * transaction; accounts back at or above it are rearmed. Answers how many alerted.
   */
  async checkBalances(): Promise<number> {
    const s = this.settings();
    const fallback = s.lowBalanceNano?.toString() ?? null;
    return this.db.transaction(async (tx) => {
      await tx.query(REARM, [fallback]);
      const crossed = await tx.query<{ id: string; available: string; threshold: string; email: string | null }>(CROSSED, [fallback]);
      for (const a of crossed) {
        const extra = s.emailBalanceLow && a.email ? [`${MAIL_ENDPOINT}${a.email}`] : [];
        await this.emit('balance.low', {
          account_id: a.id, available_usd: formatUsd(BigInt(a.available)), threshold_usd: formatUsd(BigInt(a.threshold)),
        }, { accountId: a.id, extra, tx });
      }
      return crossed.length;
    });
  }

  /**
   * One check of the keys' budgets (with the balance check, on one replica at a time): a
   * `key.budget_reached` event per key whose spend reached its budget in its current period, once
   * per period (the window is marked in the same transaction). Answers how many.
   */
  async checkKeyBudgets(): Promise<number> {
    if (this.endpointsFor('key.budget_reached').length === 0) return 0;
    return this.db.transaction(async (tx) => {
      const reached = await tx.query<BudgetWindow>(BUDGETS_REACHED, [this.clock.now()]);
      for (const k of reached) await this.budgetReached(k, tx);
      return reached.length;
    });
  }

  /**
   * A request on the key was refused for its budget (402 key_budget_exceeded): the budget is reached
   * for what clients send, though the spend may stop short of it. Once per period, as above; called
   * behind the answer, never awaited by it.
   */
  async keyBudgetRefused(keyId: string): Promise<void> {
    if (this.endpointsFor('key.budget_reached').length === 0) return;
    await this.db.transaction(async (tx) => {
      for (const k of await tx.query<BudgetWindow>(BUDGET_REFUSED, [keyId, this.clock.now()])) await this.budgetReached(k, tx);
    });
  }

  private async budgetReached(k: BudgetWindow, tx: Queryable): Promise<void> {
    await this.emit('key.budget_reached', {
      key_id: k.key_id, account_id: k.account_id, budget_usd: formatUsd(BigInt(k.budget)), spent_usd: formatUsd(BigInt(k.spent)),
      budget_period: k.budget_period, period_start: new Date(k.period_start).toISOString(),
    }, { accountId: k.account_id, tx });
  }

  /** Whether a balance check could find anything: a default threshold, or an account with its own. */
  async balanceCheckDue(): Promise<boolean> {
    if (this.settings().lowBalanceNano !== null || this.endpointsFor('key.budget_reached').length > 0) return true;
    return (await this.db.query('SELECT 1 FROM accounts WHERE low_balance_nano IS NOT NULL LIMIT 1')).length > 0;
  }

  /** Sets (or, null, clears) an account's own threshold; false when the account is unknown. */
  async setThreshold(accountId: string, nano: bigint | null): Promise<boolean> {
    const rows = await this.db.query('UPDATE accounts SET low_balance_nano = $2 WHERE id = $1 RETURNING id', [accountId, nano?.toString() ?? null]);
    return rows.length > 0;
  }
}
