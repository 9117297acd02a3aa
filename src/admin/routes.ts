/**
 * The admin API (/admin/*): accounts, keys, top-ups, usage, refunds, reconciliation and the hold
 * sweeper, over the Ledger. Every route needs `Authorization: Bearer <admin token>`. Everything lives in
 * one encapsulated plugin, so its auth hook, validator, body parser and error handler touch nothing else.
 * A key is only ever in the one response that creates it; it is never logged.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { Ajv } from 'ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthCache } from '../pipeline/auth-cache.js';
import type { Ledger } from '../ledger/ledger.js';
import type { Jobs } from '../jobs/scheduler.js';
import { AdminError, toAdminError } from './errors.js';
import { accountJson, holdJson, moneyField, paramsSchema, reconcileJson, usageJson } from './views.js';
import { registerDeploymentRoutes, type DeploymentsSource } from './deployments.js';
import { registerLimitRoutes, type LowBalanceThresholds } from './limits.js';
import { adminSchema } from './schemas.js';
import { registerKeyRoutes } from './keys.js';
import type { MailTransport } from '../console/mail.js';
import type { Clock } from '../clock.js';

/** What the admin routes need. `token` is the admin bearer token (must be non-empty). */
export interface AdminDeps {
  ledger: Ledger;
  auth: AuthCache;
  token: string;
  /** Scheduled jobs, runnable now by name. */
  jobs?: Jobs;
  /** Outgoing mail, whose development outbox GET /admin/outbox lists. */
  mail?: MailTransport;
  /** The serving configuration's deployments and their health, for GET /admin/deployments (issue 29 item 7). */
  deployments?: DeploymentsSource;
  /** The gateway's clock, for the period of a key's budget window (issue 33 item 2); default the system clock. */
  clock?: Clock;
  /** Sets accounts' own low-balance thresholds (issue 33 item 3). */
  alerts?: LowBalanceThresholds;
}

// Bodies and query: the files under schemas/admin/ that the OpenAPI document is generated from (api/admin.yaml).
const createAccountBody = adminSchema('account-create-request');
const topupBody = adminSchema('topup-request');
const usageQuery = adminSchema('usage-query');

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Constant-time check of the bearer token: both sides are hashed, so the buffers have equal length. */
function tokenChecker(token: string): (header: string | undefined) => boolean {
  const expected = digest(token);
  return (header) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    const given = digest(match?.[1] ?? '');
    return timingSafeEqual(given, expected) && match !== null;
  };
}

function sendError(reply: FastifyReply, error: AdminError): FastifyReply {
  return reply.code(error.status).header('content-type', 'application/json; charset=utf-8').send(error.body());
}

/** Registers the /admin/* routes in their own encapsulated scope. */
export function registerAdminRoutes(app: FastifyInstance, deps: AdminDeps): void {
  if (typeof deps.token !== 'string' || deps.token.length === 0) {
    throw new Error('registerAdminRoutes: the admin token must be a non-empty string');
  }
  const { ledger, auth } = deps;
  const tokenOk = tokenChecker(deps.token);
  // Bodies: exact types, unknown fields rejected. Query and params: strings coerced to numbers.
  const bodyAjv = new Ajv({ coerceTypes: false, removeAdditional: false, allErrors: false });
  const queryAjv = new Ajv({ coerceTypes: true, removeAdditional: false, allErrors: false });

  app.register(async (scope) => {
    scope.setValidatorCompiler(({ schema, httpPart }) =>
      (httpPart === 'body' ? bodyAjv : queryAjv).compile(schema as object),
    );

    // Empty JSON bodies are allowed (POST without payload); anything else must parse.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
      const text = String(body);
      if (text.trim() === '') return done(null, undefined);
      try {
        done(null, JSON.parse(text));
      } catch {
        done(new AdminError('invalid_request', 'request body is not valid JSON'), undefined);
      }
    });

    scope.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
      if (!tokenOk(req.headers.authorization)) {
        return sendError(reply, new AdminError('invalid_admin_token', 'missing or invalid admin token'));
      }
    });

    scope.setErrorHandler((error, req, reply) => {
      const mapped = toAdminError(error);
      if (mapped.status >= 500) req.log.error({ err: error }, 'admin request failed');
      return sendError(reply, mapped);
    });

    scope.setNotFoundHandler((req, reply) =>
      sendError(reply, new AdminError('not_found', `no admin route ${req.method} ${req.url.split('?')[0]}`)),
    );

    scope.post<{ Body: { balance_usd?: string; credit_limit_usd?: string } }>(
      '/accounts',
      {
        schema: { body: createAccountBody },
        preValidation: async (req) => {
          req.body ??= {};
        },
      },
      async (req, reply) => {
        const { balance_usd, credit_limit_usd } = req.body;
        const balanceNano = balance_usd === undefined ? 0n : moneyField(balance_usd, 'balance_usd', 'any');
        const creditLimitNano =
          credit_limit_usd === undefined ? 0n : moneyField(credit_limit_usd, 'credit_limit_usd', 'non_negative');
        const account = await ledger.createAccount({ balanceNano, creditLimitNano });
        const key = await ledger.createKey(account.id);
        return reply.code(201).send({ id: account.id, key: key.key, key_id: key.id });
      },
    );

    scope.get<{ Params: { id: string } }>('/accounts/:id', { schema: { params: paramsSchema('id') } }, async (req) => {
      const account = await ledger.getAccount(req.params.id);
      if (!account) throw new AdminError('not_found', `account ${req.params.id} not found`);
      return accountJson(account);
    });

    scope.get<{ Params: { id: string } }>('/accounts/:id/holds', { schema: { params: paramsSchema('id') } }, async (req) => {
      if (!(await ledger.getAccount(req.params.id))) throw new AdminError('not_found', `account ${req.params.id} not found`);
      return { data: (await ledger.listOpenHolds(req.params.id)).map(holdJson) };
    });

    scope.post<{ Params: { id: string }; Body: { amount_usd: string } }>(
      '/accounts/:id/topups',
      { schema: { params: paramsSchema('id'), body: topupBody } },
      async (req) => {
        const amount = moneyField(req.body.amount_usd, 'amount_usd', 'positive');
        return accountJson(await ledger.topUp(req.params.id, amount));
      },
    );

    scope.get<{ Params: { id: string }; Querystring: { limit?: number; after?: string; key_id?: string } }>(
      '/accounts/:id/usage',
      { schema: { params: paramsSchema('id'), querystring: usageQuery } },
      async (req) => {
        if (!(await ledger.getAccount(req.params.id))) {
          throw new AdminError('not_found', `account ${req.params.id} not found`);
        }
        const { limit, after, key_id: keyId } = req.query;
        const page = await ledger.listUsage(req.params.id, { limit, after, keyId });
        return { data: page.data.map(usageJson), next: page.next };
      },
    );

    scope.post<{ Params: { key_id: string } }>(
      '/keys/:key_id/rotate',
      { schema: { params: paramsSchema('key_id') } },
      async (req) => {
        const key = await ledger.rotateKey(req.params.key_id);
        auth.clear();
        return { id: key.id, key: key.key };
      },
    );

    scope.delete<{ Params: { key_id: string } }>(
      '/keys/:key_id',
      { schema: { params: paramsSchema('key_id') } },
      async (req, reply) => {
        await ledger.deleteKey(req.params.key_id);
        auth.clear();
        return reply.code(204).send();
      },
    );

    scope.post<{ Params: { row_id: string } }>(
      '/usage/:row_id/refund',
      { schema: { params: paramsSchema('row_id') } },
      async (req, reply) => reply.code(201).send(usageJson(await ledger.refund(req.params.row_id))),
    );

    scope.get('/reconcile', async () => {
      const lines = await ledger.reconcile();
      return { ok: lines.every((l) => l.differenceNano === 0n), accounts: lines.map(reconcileJson) };
    });

    scope.post('/holds/sweep', async () => ({ released: await ledger.sweepExpiredHolds() }));
    scope.post<{ Params: { name: string } }>('/jobs/:name/run', { schema: { params: paramsSchema('name') } }, async (req) => {
      const run = await deps.jobs?.runNow(req.params.name);
      if (!run) throw new AdminError('not_found', `no job ${req.params.name} (jobs: ${deps.jobs?.names().join(', ') || 'none'})`);
      return run;
    });
    // The development outbox (issue 13): mail the console sent while no SMTP_URL is set, newest last.
    scope.get('/outbox', async () => ({
      transport: deps.mail?.kind ?? 'none',
      data: (deps.mail?.outbox() ?? []).map((m) => ({ id: m.id, to: m.to, subject: m.subject, text: m.text, sent_at: m.sentAt })),
    }));
    registerLimitRoutes(scope, ledger, auth, deps.alerts);
    registerKeyRoutes(scope, ledger, auth, deps.clock);
    if (deps.deployments) registerDeploymentRoutes(scope, deps.deployments);
  }, { prefix: '/admin' });
}
