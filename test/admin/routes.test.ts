import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startAdmin, type AdminHarness } from './harness.js';

function expectError(res: { status: number; json: any }, status: number, code: string, param?: string | null) {
  expect(res.status).toBe(status);
  expect(Object.keys(res.json.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(res.json.error.code).toBe(code);
  expect(typeof res.json.error.message).toBe('string');
  if (param !== undefined) expect(res.json.error.param).toBe(param);
}

describeStore('admin routes', () => {
  let h: AdminHarness;
  beforeAll(async () => {
    h = await startAdmin();
  });
  afterAll(async () => {
    await h?.close();
  });

  async function newAccount(body: Record<string, unknown> = { balance_usd: '10' }) {
    const res = await h.call('POST', '/admin/accounts', { body });
    expect(res.status).toBe(201);
    return res.json as { id: string; key: string; key_id: string };
  }

  it('rejects a missing, wrong or malformed admin token with 401', async () => {
    for (const token of [null, 'wrong', `${h.token}x`, h.token.slice(0, -1), '']) {
      const res = await h.call('GET', '/admin/reconcile', { token });
      expectError(res, 401, 'invalid_admin_token', null);
      expect(res.json.error.type).toBe('authentication_error');
    }
    const basic = await h.call('GET', '/admin/reconcile', { token: null, headers: { authorization: `Basic ${h.token}` } });
    expectError(basic, 401, 'invalid_admin_token');
    // Auth runs before validation and lookups.
    expectError(await h.call('POST', '/admin/accounts', { token: 'nope', body: { bad: 1 } }), 401, 'invalid_admin_token');
    expect((await h.call('GET', '/admin/reconcile', { token: ` ${h.token}` })).status).toBe(200);
  });

  it('refuses an empty admin token at registration', async () => {
    const { default: Fastify } = await import('fastify');
    const { registerAdminRoutes } = await import('../../src/admin/routes.js');
    expect(() => registerAdminRoutes(Fastify(), { ledger: h.ledger, auth: h.auth, token: '' })).toThrow(/token/);
  });

  it('creates an account with its first key, and shows it', async () => {
    const created = await newAccount({ balance_usd: '12.5', credit_limit_usd: '0.000000001' });
    expect(Object.keys(created).sort()).toEqual(['id', 'key', 'key_id']);
    expect(await h.ledger.authenticate(created.key)).toMatchObject({ accountId: created.id, keyId: created.key_id });
    const shown = await h.call('GET', `/admin/accounts/${created.id}`);
    expect(shown.status).toBe(200);
    expect(shown.json).toEqual({ id: created.id, balance_usd: '12.5', credit_limit_usd: '0.000000001', held_usd: '0', granted_usd: '0', open_holds: 0 });
    const empty = await h.call('POST', '/admin/accounts');
    expect(empty.status).toBe(201);
    const emptyJson = await h.call('POST', '/admin/accounts', { body: '', headers: { 'content-type': 'application/json' } });
    expect(emptyJson.status).toBe(201);
    expect((await h.call('GET', `/admin/accounts/${empty.json.id}`)).json.balance_usd).toBe('0');
  });

  it('validates account bodies', async () => {
    const post = (body: unknown) => h.call('POST', '/admin/accounts', { body });
    expectError(await post({ balance_usd: 5 }), 400, 'invalid_request', 'balance_usd');
    expectError(await post({ balance_usd: '1', extra: true }), 400, 'invalid_request', 'extra');
    expectError(await post('{"__proto__": {"admin": true}}'), 400, 'invalid_request', '__proto__');
    expectError(await post('{"balance_usd": '), 400, 'invalid_request');
    expectError(await post([]), 400, 'invalid_request');
    expectError(await post({ balance_usd: 'ten' }), 400, 'invalid_amount', 'balance_usd');
    expectError(await post({ balance_usd: '1.0000000001' }), 400, 'invalid_amount', 'balance_usd');
    expectError(await post({ balance_usd: '99999999999' }), 400, 'invalid_amount', 'balance_usd');
    expectError(await post({ credit_limit_usd: '-1' }), 400, 'invalid_amount', 'credit_limit_usd');
    const text = await h.call('POST', '/admin/accounts', { body: '<a/>', headers: { 'content-type': 'application/xml' } });
    expect(text.status).toBe(415);
    expect(text.json.error.code).toBe('invalid_request');
  });

  it('tops up, and 404s unknown accounts', async () => {
    const { id } = await newAccount();
    const res = await h.call('POST', `/admin/accounts/${id}/topups`, { body: { amount_usd: '2.000000001' } });
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ id, balance_usd: '12.000000001', credit_limit_usd: '0', held_usd: '0', granted_usd: '0', open_holds: 0 });
    expectError(await h.call('POST', `/admin/accounts/${id}/topups`, { body: {} }), 400, 'invalid_request', 'amount_usd');
    expectError(await h.call('POST', `/admin/accounts/${id}/topups`, { body: { amount_usd: '0' } }), 400, 'invalid_amount');
    expectError(await h.call('POST', `/admin/accounts/${id}/topups`, { body: { amount_usd: '-1' } }), 400, 'invalid_amount');
    expectError(await h.call('POST', '/admin/accounts/acct_nope/topups', { body: { amount_usd: '1' } }), 404, 'not_found');
    expectError(await h.call('GET', '/admin/accounts/acct_nope'), 404, 'not_found');
    expectError(await h.call('GET', '/admin/nothing-here'), 404, 'not_found');
    expectError(await h.call('GET', '/admin/nothing-here', { token: null }), 401, 'invalid_admin_token');
  });

  it('creates, rotates and deletes keys; old keys stop working at once', async () => {
    const { id, key: firstKey, key_id: firstId } = await newAccount();
    const created = await h.call('POST', `/admin/accounts/${id}/keys`);
    expect(created.status).toBe(201);
    // The one answer with the key: its id, the key, and the key as GET /admin/keys/{id} shows it (no controls: issue 33 item 2).
    expect(created.json).toMatchObject({ id: expect.any(String), key: expect.stringMatching(/^gw-/), account_id: id, budget_usd: null, allowed_models: null, expires_at: null, spent_usd: null });
    expect((await h.auth.authenticate(created.json.key))?.accountId).toBe(id);
    expectError(await h.call('POST', '/admin/accounts/acct_nope/keys'), 404, 'not_found');

    // Warm the auth cache, rotate, and check both the ledger and the cache refuse the old key.
    expect(await h.auth.authenticate(firstKey)).not.toBeNull();
    const rotated = await h.call('POST', `/admin/keys/${firstId}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.json.id).not.toBe(firstId);
    expect(await h.ledger.authenticate(firstKey)).toBeNull();
    expect(await h.auth.authenticate(firstKey)).toBeNull();
    expect(await h.ledger.authenticate(rotated.json.key)).toMatchObject({ accountId: id, keyId: rotated.json.id });
    expectError(await h.call('POST', `/admin/keys/${firstId}/rotate`), 404, 'not_found');
    expectError(await h.call('POST', '/admin/keys/key_nope/rotate'), 404, 'not_found');

    expect(await h.auth.authenticate(rotated.json.key)).not.toBeNull();
    const deleted = await h.call('DELETE', `/admin/keys/${rotated.json.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect(await h.auth.authenticate(rotated.json.key)).toBeNull();
    expectError(await h.call('DELETE', '/admin/keys/key_nope'), 404, 'not_found');

    // Keys appear in the creating responses only, never in the logs.
    const logs = h.logs.join('');
    for (const k of [firstKey, created.json.key, rotated.json.key]) expect(logs).not.toContain(k);
    expect(logs).not.toContain(h.token);
  });

  it('lists usage newest first with cursor pagination', async () => {
    const { id } = await newAccount();
    const rows = await h.charge(id, [1n, 2n, 3n, 4n, 1_500_000_000n]);
    const seen: any[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const qs: string = after ? `?limit=2&after=${after}` : '?limit=2';
      const res = await h.call('GET', `/admin/accounts/${id}/usage${qs}`);
      expect(res.status).toBe(200);
      expect(res.json.data.length).toBeLessThanOrEqual(2);
      seen.push(...res.json.data);
      after = res.json.next;
      pages++;
    } while (after);
    expect(pages).toBe(3);
    expect(seen.map((r) => r.id)).toEqual(rows.map((r) => r.id).reverse());
    const top = seen[0];
    expect(top).toEqual({
      id: rows[4]!.id, key_id: null, deployment: null, request_id: rows[4]!.requestId, model: 'test-model', kind: 'tokens', quantity: 1000, unit: 'token',
      amount_usd: '1.5', details: rows[4]!.details, refund_of: null, created_at: rows[4]!.createdAt.toISOString(),
    });
    const all = await h.call('GET', `/admin/accounts/${id}/usage`);
    expect(all.json.data).toHaveLength(5);
    expect(all.json.next).toBeNull();
    expect((await h.call('GET', `/admin/accounts/${id}/usage?limit=100000`)).json.data).toHaveLength(5); // ledger caps at 500
    for (const qs of ['?limit=0', '?limit=abc', '?limit=-1', '?limit=1.5', '?bogus=1', '?key_id=', `?key_id=${'k'.repeat(201)}`]) {
      expectError(await h.call('GET', `/admin/accounts/${id}/usage${qs}`), 400, 'invalid_request');
    }
    expectError(await h.call('GET', '/admin/accounts/acct_nope/usage'), 404, 'not_found');
  });

  it('refunds a row once', async () => {
    const { id } = await newAccount({ balance_usd: '1' });
    const [row] = await h.charge(id, [250_000_000n]);
    const res = await h.call('POST', `/admin/usage/${row!.id}/refund`);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ kind: 'refund', amount_usd: '-0.25', refund_of: row!.id, quantity: 1000, model: 'test-model' });
    expect(new Date(res.json.created_at).toISOString()).toBe(res.json.created_at);
    expect((await h.call('GET', `/admin/accounts/${id}`)).json.balance_usd).toBe('1');
    expectError(await h.call('POST', `/admin/usage/${row!.id}/refund`), 409, 'already_refunded');
    expectError(await h.call('POST', `/admin/usage/${res.json.id}/refund`), 400, 'invalid_amount');
    expectError(await h.call('POST', '/admin/usage/use_nope/refund'), 404, 'not_found');
  });

  it('reconciles every account and reports a tampered balance', async () => {
    const { id } = await newAccount({ balance_usd: '3' });
    await h.charge(id, [7n]);
    const ok = await h.call('GET', '/admin/reconcile');
    expect(ok.status).toBe(200);
    expect(ok.json.ok).toBe(true);
    const count = (await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM accounts'))[0]!.n;
    expect(ok.json.accounts).toHaveLength(count);
    expect(ok.json.accounts.find((a: any) => a.account_id === id)).toEqual({
      account_id: id, opening_usd: '3', topups_usd: '0', balance_usd: '2.999999993', usage_usd: '0.000000007',
      refunds_usd: '0', open_holds_usd: '0', difference_usd: '0',
    });
    await h.db.query('UPDATE accounts SET balance_nano = balance_nano + 1 WHERE id = $1', [id]);
    const bad = await h.call('GET', '/admin/reconcile');
    expect(bad.json.ok).toBe(false);
    expect(bad.json.accounts.find((a: any) => a.account_id === id).difference_usd).toBe('-0.000000001');
    await h.db.query('UPDATE accounts SET balance_nano = balance_nano - 1 WHERE id = $1', [id]);
    expect((await h.call('GET', '/admin/reconcile')).json.ok).toBe(true);
  });

  it('sweeps expired holds', async () => {
    const { id } = await newAccount({ balance_usd: '1' });
    const holdId = `hold_sweep_${id}`;
    expect(await h.ledger.reserve({ holdId, accountId: id, amountNano: 5n, ttlMs: 60_000 })).toBe(true);
    expect((await h.call('GET', `/admin/accounts/${id}`)).json).toMatchObject({ held_usd: '0.000000005', open_holds: 1 });
    const holds = (await h.call('GET', `/admin/accounts/${id}/holds`)).json.data;
    expect(holds).toEqual([{ id: holdId, kind: 'request', amount_usd: '0.000000005', created_at: expect.any(String), expires_at: expect.any(String) }]);
    expectError(await h.call('GET', '/admin/accounts/acct_nope/holds'), 404, 'not_found');
    await h.db.query("UPDATE holds SET expires_at = now() - interval '1 minute' WHERE id = $1", [holdId]);
    const res = await h.call('POST', '/admin/holds/sweep');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ released: 1 });
    expect((await h.call('GET', `/admin/accounts/${id}`)).json).toMatchObject({ balance_usd: '1', held_usd: '0', granted_usd: '0', open_holds: 0 });
    expect((await h.call('POST', '/admin/holds/sweep')).json).toEqual({ released: 0 });
  });
});
