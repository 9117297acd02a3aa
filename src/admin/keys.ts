/**
 * The key routes with per-key controls (issue 33 item 2): create a key with them
 * (POST /admin/accounts/{id}/keys or POST /admin/keys with `account_id`), read one with what it spent
 * in its budget period (GET /admin/keys/{key_id}), and change them with PATCH /admin/keys/{key_id}
 * (with `limits`, issue 4, too): an absent field is kept, null clears it. Every change clears this
 * process's key cache at once, as a revocation does (other replicas see it within the cache's life).
 */
import type { FastifyInstance } from 'fastify';
import { systemClock, type Clock } from '../clock.js';
import type { KeyControls, KeyControlsPatch, KeyDetails } from '../ledger/key-controls.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Limits } from '../limits/types.js';
import { formatUsd } from '../money.js';
import type { AuthCache } from '../pipeline/auth-cache.js';
import { AdminError } from './errors.js';
import { adminSchema } from './schemas.js';
import { moneyField, paramsSchema } from './views.js';

// Bodies: the files under schemas/admin/ that the OpenAPI document is generated from (api/admin.yaml).
const createBody = adminSchema('key-create-request');
const createWithAccountBody = adminSchema('key-create-with-account-request');
const patchBody = adminSchema('key-patch-request');

/** A body's control fields as sent (absent, null or a value). */
interface ControlFields { budget_usd?: string | null; budget_period?: KeyControls['budgetPeriod']; allowed_models?: string[] | null; expires_at?: string | null }

/** An RFC 3339 time with a zone (`2027-01-01T00:00:00Z`), or the 400 naming `expires_at`. */
function timeField(value: string): Date {
  const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(value);
  const at = new Date(value);
  if (!ok || Number.isNaN(at.getTime())) throw new AdminError('invalid_request', 'expires_at must be an RFC 3339 time with a zone, e.g. 2027-01-01T00:00:00Z', 'expires_at');
  return at;
}

/** The patch the fields ask for: absent fields stay absent, null clears. */
export function controlsPatch(body: ControlFields): KeyControlsPatch {
  const patch: KeyControlsPatch = {};
  if (body.budget_usd !== undefined) patch.budgetNano = body.budget_usd === null ? null : moneyField(body.budget_usd, 'budget_usd', 'non_negative');
  if (body.budget_period !== undefined) patch.budgetPeriod = body.budget_period;
  if (body.allowed_models !== undefined) patch.allowedModels = body.allowed_models === null ? null : [...new Set(body.allowed_models)];
  if (body.expires_at !== undefined) patch.expiresAt = body.expires_at === null ? null : timeField(body.expires_at);
  return patch;
}

/** The controls of a new key from its creation body (a budget needs its period). */
function newControls(body: ControlFields): KeyControls {
  const patch = controlsPatch(body);
  const controls: KeyControls = { budgetNano: patch.budgetNano ?? null, budgetPeriod: patch.budgetPeriod ?? null, allowedModels: patch.allowedModels ?? null, expiresAt: patch.expiresAt ?? null };
  if ((controls.budgetNano === null) !== (controls.budgetPeriod === null)) {
    throw new AdminError('invalid_request', 'budget_usd and budget_period go together (budget_period: day, month or total)', controls.budgetNano === null ? 'budget_usd' : 'budget_period');
  }
  return controls;
}

/** A key as GET /admin/keys/{id} shows it: controls, and its budget window of the current period. */
export function keyJson(k: KeyDetails, now: Date) {
  const c = k.controls;
  return {
    id: k.id,
    account_id: k.accountId,
    name: k.name,
    prefix: k.prefix,
    created_at: k.createdAt.toISOString(),
    revoked_at: k.revokedAt?.toISOString() ?? null,
    limits: k.limits,
    budget_usd: c.budgetNano === null ? null : formatUsd(c.budgetNano),
    budget_period: c.budgetPeriod,
    allowed_models: c.allowedModels,
    expires_at: c.expiresAt?.toISOString() ?? null,
    expired: c.expiresAt !== null && c.expiresAt.getTime() <= now.getTime(),
    // What the key spent (charged) and holds (in flight) in the period that started at period_start.
    period_start: k.usage?.periodStart.toISOString() ?? null,
    spent_usd: k.usage ? formatUsd(k.usage.spentNano) : null,
    held_usd: k.usage ? formatUsd(k.usage.heldNano) : null,
  };
}

/** Registers the key routes inside the admin scope. */
export function registerKeyRoutes(scope: FastifyInstance, ledger: Ledger, auth: AuthCache, clock: Clock = systemClock): void {
  const shown = async (keyId: string) => {
    const now = clock.now();
    const key = await ledger.getKey(keyId, now);
    if (!key) throw new AdminError('not_found', `key ${keyId} not found`);
    return keyJson(key, now);
  };
  const create = async (accountId: string, body: ControlFields & { name?: string | null }) => {
    const created = await ledger.createKey(accountId, body.name ?? null, newControls(body));
    return { ...(await shown(created.id)), key: created.key };
  };
  scope.post<{ Params: { id: string }; Body: ControlFields & { name?: string | null } }>(
    '/accounts/:id/keys',
    { schema: { params: paramsSchema('id'), body: createBody }, preValidation: async (req) => { req.body ??= {}; } },
    async (req, reply) => reply.code(201).send(await create(req.params.id, req.body)),
  );
  scope.post<{ Body: ControlFields & { name?: string | null; account_id: string } }>(
    '/keys',
    { schema: { body: createWithAccountBody } },
    async (req, reply) => {
      const { account_id: accountId, ...rest } = req.body;
      return reply.code(201).send(await create(accountId, rest));
    },
  );
  scope.get<{ Params: { key_id: string } }>('/keys/:key_id', { schema: { params: paramsSchema('key_id') } }, async (req) => shown(req.params.key_id));
  scope.patch<{ Params: { key_id: string }; Body: ControlFields & { limits?: Limits | null } }>(
    '/keys/:key_id',
    { schema: { params: paramsSchema('key_id'), body: patchBody } },
    async (req) => {
      const { limits, ...fields } = req.body;
      const patch = controlsPatch(fields);
      if (limits !== undefined) await ledger.setKeyLimits(req.params.key_id, limits);
      if (Object.keys(patch).length > 0) await ledger.updateKeyControls(req.params.key_id, patch);
      auth.clear();
      return shown(req.params.key_id);
    },
  );
}
