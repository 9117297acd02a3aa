/**
 * A key's budget across replicas (issue 33 item 2): two gateway processes on one PostgreSQL, credit
 * grants on (the default configuration). 200 concurrent requests on a key with a small budget, half
 * on each replica, never spend past it: its requests take the strict path, guarded by the key's
 * window in the reserve's transaction. The balance pays exactly the key's charges, the account's
 * other key still spends (on grants), and the ledger reconciles. PostgreSQL only: two processes
 * cannot share a PGlite folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd, parseUsd } from '../../src/money.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';
import { kill9, spawnGateway, type GatewayProcess } from '../helpers/process.js';

const TOKEN = 'key-budget-replicas-admin-token-0123456789';
const postgresOnly = storeKind === 'postgres' ? describeStore : describe.skip;

postgresOnly('a key budget on two gateway processes', () => {
  let pg: Awaited<ReturnType<typeof openTestDb>>;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    pg = await openTestDb();
    const env = { DATABASE_URL: pg.databaseUrl, GATEWAY_ADMIN_TOKEN: TOKEN };
    [a, b] = await Promise.all([spawnGateway(env), spawnGateway(env)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([a, b].filter(Boolean).map((g) => kill9(g.child)));
    await pg?.dispose();
  }, 60_000);

  async function admin<T = any>(gw: GatewayProcess, method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${gw.url}/admin${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  }
  const chat = (gw: GatewayProcess, key: string) => fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 32, messages: [{ role: 'user', content: 'a key budget across replicas' }] }),
  });
  /** The reserve one request needs, read from a 402 at zero balance. */
  async function quote(): Promise<bigint> {
    const probe = await admin<{ id: string; key: string }>(a, 'POST', '/accounts', { balance_usd: '0' });
    const res = await chat(a, probe.key);
    const message = (await res.json() as { error: { message: string } }).error.message;
    return parseUsd(/needs \$([0-9.]+) reserved/.exec(message)![1]!);
  }
  const keyUsage = async (accountId: string, keyId: string) => {
    const page = await admin<{ data: Array<{ amount_usd: string }> }>(b, 'GET', `/accounts/${accountId}/usage?limit=500&key_id=${keyId}`);
    return { rows: page.data.length, nano: page.data.reduce((sum, r) => sum + parseUsd(r.amount_usd), 0n) };
  };

  it('200 concurrent requests on both replicas never spend past the key budget; the balance and the other key are unaffected', async () => {
    const q = await quote();
    const budget = q * 10n;
    const acct = await admin<{ id: string; key: string }>(a, 'POST', '/accounts', { balance_usd: '5' });
    const key = await admin<{ id: string; key: string }>(b, 'POST', '/keys', { account_id: acct.id, name: 'small', budget_usd: formatUsd(budget), budget_period: 'day' });
    const results = await Promise.all(Array.from({ length: 200 }, async (_, i) => {
      const res = await chat(i % 2 ? b : a, key.key);
      const body = await res.json() as { error?: { code: string } };
      return { status: res.status, code: body.error?.code ?? null };
    }));
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBeGreaterThanOrEqual(10);
    expect(results.filter((r) => r.status === 402).every((r) => r.code === 'key_budget_exceeded')).toBe(true);
    expect(ok + results.filter((r) => r.status === 402).length).toBe(200);
    expect(ok).toBeLessThan(200);
    const spent = await keyUsage(acct.id, key.id);
    expect(spent.rows).toBe(ok);
    expect(spent.nano).toBeLessThanOrEqual(budget);
    const shown = await admin<{ spent_usd: string; held_usd: string }>(a, 'GET', `/keys/${key.id}`);
    expect(shown).toMatchObject({ spent_usd: formatUsd(spent.nano), held_usd: '0' });
    // The key's requests never opened a grant, so the account's money moved by exactly the key's charges.
    const view = await admin<{ balance_usd: string; held_usd: string; granted_usd: string }>(a, 'GET', `/accounts/${acct.id}`);
    expect(parseUsd(view.balance_usd) + parseUsd(view.held_usd)).toBe(5_000_000_000n - spent.nano);
    // The account's first key has no budget: both replicas still serve it.
    for (const gw of [a, b]) {
      const res = await chat(gw, acct.key);
      expect(res.status).toBe(200);
      await res.text();
    }
    expect((await admin<{ spent_usd: string }>(b, 'GET', `/keys/${key.id}`)).spent_usd).toBe(formatUsd(spent.nano));
    await new Promise((r) => setTimeout(r, 500));
    expect((await admin<{ ok: boolean }>(b, 'GET', '/reconcile')).ok).toBe(true);
  }, 120_000);
});
