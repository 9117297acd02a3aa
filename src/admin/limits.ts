/**
 * PATCH /admin/accounts/{id} with `{limits: {...}}` (issue 4): sets the rate-limit override of an
 * account (field by field over the config defaults; a null field is "unlimited"); `{limits: null}`
 * clears it. A key's own limits (on top of its account's) are set by PATCH /admin/keys/{key_id}
 * (src/admin/keys.ts), with its other controls (issue 33 item 2).
 * An account's PATCH also takes `low_balance_usd` (issue 33 item 3): its own threshold of the
 * `balance.low` alert over `alerts.low_balance_usd`; null clears it.
 */
import type { FastifyInstance } from 'fastify';
import type { Ledger } from '../ledger/ledger.js';
import type { Limits } from '../limits/types.js';
import type { AuthCache } from '../pipeline/auth-cache.js';
import { formatUsd } from '../money.js';
import { AdminError } from './errors.js';
import { adminSchema } from './schemas.js';
import { moneyField, paramsSchema } from './views.js';

/** Where an account's own low-balance threshold is kept. */
export interface LowBalanceThresholds {
  setThreshold(accountId: string, nano: bigint | null): Promise<boolean>;
}

interface AccountPatch { limits?: Limits | null; low_balance_usd?: string | null }

/** Registers the account's PATCH route inside the admin scope. */
export function registerLimitRoutes(scope: FastifyInstance, ledger: Ledger, auth: AuthCache, thresholds?: LowBalanceThresholds): void {
  scope.patch<{ Params: { id: string }; Body: AccountPatch }>(
    '/accounts/:id',
    { schema: { params: paramsSchema('id'), body: adminSchema('account-patch-request') } },
    async (req) => {
      const { id } = req.params;
      const answer: Record<string, unknown> = { id };
      if (req.body.low_balance_usd !== undefined) {
        if (!thresholds) throw new AdminError('invalid_request', 'low_balance_usd needs the alerts outbox, which this gateway has not');
        const nano = req.body.low_balance_usd === null ? null : moneyField(req.body.low_balance_usd, 'low_balance_usd', 'non_negative');
        if (!(await thresholds.setThreshold(id, nano))) throw new AdminError('not_found', `no account ${id}`);
        answer.low_balance_usd = nano === null ? null : formatUsd(nano);
      }
      if (req.body.limits !== undefined) {
        await ledger.setAccountLimits(id, req.body.limits);
        auth.clear();
        answer.limits = req.body.limits;
      }
      return answer;
    },
  );
}
