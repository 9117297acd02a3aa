/**
 * PATCH /admin/accounts/{id} with `{limits: {...}}` (issue 4): sets the rate-limit override of an
 * account (field by field over the config defaults; a null field is "unlimited"); `{limits: null}`
 * clears it. A key's own limits (on top of its account's) are set by PATCH /admin/keys/{key_id}
 * (src/admin/keys.ts), with its other controls.
 */
import type { FastifyInstance } from 'fastify';
import type { Ledger } from '../ledger/ledger.js';
import type { Limits } from '../limits/types.js';
import type { AuthCache } from '../pipeline/auth-cache.js';
import { paramsSchema } from './views.js';

const limit = { type: ['integer', 'null'], minimum: 1 };

const patchBody = {
  type: 'object',
  additionalProperties: false,
  required: ['limits'],
  properties: {
    limits: {
      type: ['object', 'null'],
      additionalProperties: false,
      properties: { requests_per_minute: limit, tokens_per_minute: limit, concurrent_requests: limit },
    },
  },
};

/** Registers the account's PATCH route inside the admin scope. */
export function registerLimitRoutes(scope: FastifyInstance, ledger: Ledger, auth: AuthCache): void {
  scope.patch<{ Params: { id: string }; Body: { limits: Limits | null } }>(
    '/accounts/:id',
    { schema: { params: paramsSchema('id'), body: patchBody } },
    async (req) => {
      await ledger.setAccountLimits(req.params.id, req.body.limits);
      auth.clear();
      return { id: req.params.id, limits: req.body.limits };
    },
  );
}
