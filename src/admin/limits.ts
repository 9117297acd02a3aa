/**
 * PATCH /admin/accounts/{id} and PATCH /admin/keys/{key_id} with `{limits: {...}}` (issue 4): sets
 * the rate-limit override of an account (field by field over the config defaults; a null field is
 * "unlimited") or of a key (its own limits on top of its account's); `{limits: null}` clears it.
 */
import type { FastifyInstance } from 'fastify';
import type { Ledger } from '../ledger/ledger.js';
import type { Limits } from '../limits/types.js';
import type { AuthCache } from '../pipeline/auth-cache.js';
import { paramsSchema } from './views.js';
import { adminSchema } from './schemas.js';

/** Registers the two PATCH routes inside the admin scope. */
export function registerLimitRoutes(scope: FastifyInstance, ledger: Ledger, auth: AuthCache): void {
  scope.patch<{ Params: { id: string }; Body: { limits: Limits | null } }>(
    '/accounts/:id',
    { schema: { params: paramsSchema('id'), body: adminSchema('account-patch-request') } },
    async (req) => {
      await ledger.setAccountLimits(req.params.id, req.body.limits);
      auth.clear();
      return { id: req.params.id, limits: req.body.limits };
    },
  );
  scope.patch<{ Params: { key_id: string }; Body: { limits: Limits | null } }>(
    '/keys/:key_id',
    { schema: { params: paramsSchema('key_id'), body: adminSchema('key-patch-request') } },
    async (req) => {
      await ledger.setKeyLimits(req.params.key_id, req.body.limits);
      auth.clear();
      return { id: req.params.key_id, limits: req.body.limits };
    },
  );
}
