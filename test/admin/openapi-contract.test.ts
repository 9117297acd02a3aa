/**
 * The admin API against its OpenAPI document (issue 33 item 4): api/admin.yaml lists exactly the
 * routes the admin plugin registers, each body and query schema the plugin validates with is the
 * document's, and every answer of a real gateway (successes and errors) fits the document's schema
 * for its operation and status. The last test shows the check can fail.
 */
import Fastify from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadApiManifests, type ApiOperation } from '../../codegen/api-manifest.js';
import { registerAdminRoutes, type AdminDeps } from '../../src/admin/routes.js';
import { projectRoot } from '../../src/paths.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { answerChecker, generatedDocument } from '../helpers/openapi-contract.js';

interface Registered { route: string; body?: unknown; querystring?: unknown }

/** The admin plugin's routes as `METHOD /path/{param}` with their schemas, on a bare fastify (nothing is called). */
async function registeredRoutes(): Promise<Registered[]> {
  const app = Fastify();
  const found: Registered[] = [];
  app.addHook('onRoute', (route) => {
    const schema = (route.schema ?? {}) as { body?: unknown; querystring?: unknown };
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') found.push({ route: `${method} ${route.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`, body: schema.body, querystring: schema.querystring });
    }
  });
  registerAdminRoutes(app, { token: 'x', deployments: {} } as unknown as AdminDeps);
  await app.ready();
  await app.close();
  return found.sort((a, b) => a.route.localeCompare(b.route));
}

async function adminOperations(): Promise<ApiOperation[]> {
  const admin = (await loadApiManifests(projectRoot())).find((m) => m.file === 'api/admin.yaml');
  return admin!.manifest.operations;
}

/** A schema file as the plugin loads it (src/admin/schemas.ts: without $schema and $id). */
function schemaFile(file: string): unknown {
  const { $schema: _d, $id: _i, ...rest } = JSON.parse(readFileSync(join(projectRoot(), 'schemas', file), 'utf8')) as Record<string, unknown>;
  return rest;
}

describe('admin API manifest', () => {
  it('lists exactly the routes the admin plugin registers, under /admin', async () => {
    const listed = (await adminOperations()).map((op) => `${op.method} ${op.path}`).sort();
    const registered = (await registeredRoutes()).map((r) => r.route).filter((r) => !r.endsWith(' /admin/*') && !r.endsWith(' /admin'));
    expect(registered).toEqual(listed);
  });

  it('documents the very body and query schemas the plugin validates with', async () => {
    const registered = new Map((await registeredRoutes()).map((r) => [r.route, r]));
    for (const op of await adminOperations()) {
      const r = registered.get(`${op.method} ${op.path}`)!;
      expect(r.body, `${op.id} body`).toEqual(op.body?.schema ? schemaFile(op.body.schema) : undefined);
      expect(r.querystring, `${op.id} query`).toEqual(op.query ? schemaFile(op.query) : undefined);
    }
  });

  it('names every admin error code in the error schema', async () => {
    const { ADMIN_ERRORS } = await import('../../src/admin/errors.js');
    const error = schemaFile('admin/error.json') as { properties: { error: { properties: { code: { enum: string[] }; type: { enum: string[] } } } } };
    expect(error.properties.error.properties.code.enum.sort()).toEqual(Object.keys(ADMIN_ERRORS).sort());
    expect(error.properties.error.properties.type.enum.sort()).toEqual([...new Set(Object.values(ADMIN_ERRORS).map((e) => e.type))].sort());
  });
});

describe('admin API answers fit the OpenAPI document', () => {
  let t: TestGateway;
  const doc = generatedDocument();
  const checker = answerChecker(doc);

  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });

  /** Calls the admin API and checks the answer against `template`'s documented answer for its status. */
  async function call(method: string, template: string, params: Record<string, string>, opts: { body?: unknown; query?: string; token?: string } = {}) {
    const path = template.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params[name]!));
    const res = await fetch(`${t.url}${path}${opts.query ?? ''}`, {
      method,
      headers: { authorization: `Bearer ${opts.token ?? ADMIN_TOKEN}`, ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const text = await res.text();
    const json = text ? JSON.parse(text) : undefined;
    if (res.status !== 204) checker.check(method, template, res.status, json);
    else expect(doc.paths[template][method.toLowerCase()].responses['204']).toBeDefined();
    return { status: res.status, json };
  }

  it('every operation, successes and errors', async () => {
    const created = await call('POST', '/admin/accounts', {}, { body: { balance_usd: '2', credit_limit_usd: '0.5' } });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    expect((await call('POST', '/admin/accounts', {})).status).toBe(201); // an empty body
    expect((await call('GET', '/admin/accounts/{id}', { id })).json).toMatchObject({ id, balance_usd: '2', credit_limit_usd: '0.5' });
    expect((await call('POST', '/admin/accounts/{id}/topups', { id }, { body: { amount_usd: '1.25' } })).json.balance_usd).toBe('3.25');
    expect((await call('PATCH', '/admin/accounts/{id}', { id }, { body: { limits: { requests_per_minute: 600, concurrent_requests: null } } })).status).toBe(200);
    expect((await call('PATCH', '/admin/accounts/{id}', { id }, { body: { limits: null } })).json).toEqual({ id, limits: null });

    // A usage row to list and refund: one simulated chat completion on the account's first key.
    const chat = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${created.json.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hi' }], max_tokens: 16 }),
    });
    expect(chat.status).toBe(200);
    await chat.text();
    await t.gw.postGrants();
    const usage = await call('GET', '/admin/accounts/{id}/usage', { id }, { query: `?limit=10&key_id=${encodeURIComponent(created.json.key_id)}` });
    expect(usage.json.data.length).toBeGreaterThan(0);
    const rowId = usage.json.data[0].id as string;
    expect((await call('POST', '/admin/usage/{row_id}/refund', { row_id: rowId })).json.refund_of).toBe(rowId);
    expect((await call('POST', '/admin/usage/{row_id}/refund', { row_id: rowId })).json.error.code).toBe('already_refunded');
    await call('GET', '/admin/accounts/{id}/holds', { id });

    const key = await call('POST', '/admin/accounts/{id}/keys', { id });
    expect(key.status).toBe(201);
    // Per-key controls (issue 33 item 2): created with them, read with the period's spend, changed by PATCH.
    const budgeted = await call('POST', '/admin/keys', {}, { body: { account_id: id, name: 'ci', budget_usd: '1', budget_period: 'day', allowed_models: ['gpt-4o*'], expires_at: '2030-01-01T00:00:00Z' } });
    expect(budgeted.json).toMatchObject({ budget_usd: '1', budget_period: 'day', spent_usd: '0', held_usd: '0' });
    expect((await call('GET', '/admin/keys/{key_id}', { key_id: budgeted.json.id })).json).toMatchObject({ allowed_models: ['gpt-4o*'], expires_at: '2030-01-01T00:00:00.000Z' });
    expect((await call('PATCH', '/admin/keys/{key_id}', { key_id: budgeted.json.id }, { body: { budget_usd: null, allowed_models: null } })).json).toMatchObject({ budget_usd: null, spent_usd: null });
    expect((await call('POST', '/admin/accounts/{id}/keys', { id }, { body: { budget_usd: '1' } })).json.error.code).toBe('invalid_request');
    expect((await call('GET', '/admin/keys/{key_id}', { key_id: 'key_missing' })).status).toBe(404);
    const rotated = await call('POST', '/admin/keys/{key_id}/rotate', { key_id: key.json.id });
    expect(rotated.json.key).not.toBe(key.json.key);
    const keyId = rotated.json.id as string;
    expect((await call('PATCH', '/admin/keys/{key_id}', { key_id: keyId }, { body: { limits: { tokens_per_minute: 1000 } } })).status).toBe(200);
    expect((await call('DELETE', '/admin/keys/{key_id}', { key_id: keyId })).status).toBe(204);

    expect((await call('GET', '/admin/reconcile', {})).json.ok).toBe(true);
    await call('POST', '/admin/holds/sweep', {});
    expect((await call('POST', '/admin/jobs/{name}/run', { name: 'hold-sweeper' })).json.job).toBe('hold-sweeper');
    await call('GET', '/admin/outbox', {});
    expect((await call('GET', '/admin/deployments', {})).json.data.length).toBeGreaterThan(0);

    // Errors, each in the documented error body.
    expect((await call('GET', '/admin/accounts/{id}', { id: 'acct_missing' })).status).toBe(404);
    expect((await call('POST', '/admin/accounts', {}, { body: { balance_usd: 'ten' } })).json.error).toMatchObject({ code: 'invalid_amount', param: 'balance_usd' });
    expect((await call('POST', '/admin/accounts/{id}/topups', { id }, { body: { amount_usd: '1', extra: true } })).json.error.code).toBe('invalid_request');
    expect((await call('GET', '/admin/reconcile', {}, { token: 'not-the-admin-token' })).status).toBe(401);
    expect((await call('POST', '/admin/jobs/{name}/run', { name: 'no-such-job' })).status).toBe(404);

    const documented = (await adminOperations()).map((op) => op.id).filter((op) => op !== 'admin-key-delete'); // a 204 has no body
    expect([...checker.covered].sort()).toEqual(documented.sort());
  });

  it('fails an answer the document does not describe', () => {
    const account = { id: 'acct_1', balance_usd: '1', credit_limit_usd: '0', held_usd: '0', granted_usd: '0', open_holds: 0 };
    expect(() => checker.check('GET', '/admin/accounts/{id}', 200, account)).not.toThrow();
    expect(() => checker.check('GET', '/admin/accounts/{id}', 200, { ...account, balance_usd: 1 })).toThrow(/balance_usd/);
    expect(() => checker.check('GET', '/admin/accounts/{id}', 200, { ...account, spent_usd: '0' })).toThrow(/additional/);
    expect(() => checker.check('GET', '/admin/accounts/{id}', 200, { ...account, held_usd: '0.10' })).toThrow(/pattern/);
  });
});
