/**
 * Credit grants across replicas (issue 30): two gateway processes on one PostgreSQL, each holding
 * grants for the same account. No overspend under 400 concurrent requests; no spurious 402 while the
 * other replica holds unspent headroom (it is reclaimed); a paused replica's grant blocks only until
 * the sweeper closes it. PostgreSQL only: two processes cannot share a PGlite folder.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUsd } from '../../src/money.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';
import { kill9, spawnGateway, type GatewayProcess } from '../helpers/process.js';

const TOKEN = 'grants-replicas-admin-token-0123456789';
const LEASE_SECONDS = 3;
const postgresOnly = storeKind === 'postgres' ? describeStore : describe.skip;

postgresOnly('credit grants on two gateway processes', () => {
  let pg: Awaited<ReturnType<typeof openTestDb>>;
  let config: ConfigCopy;
  let a: GatewayProcess;
  let b: GatewayProcess;

  beforeAll(async () => {
    pg = await openTestDb();
    config = await copyConfig();
    // A short lease and sweep, so that a paused replica's grant is closed within the test.
    await config.editYaml('gateway.config.yaml', (doc) => {
      doc.billing = { ...doc.billing, sweep_interval_seconds: 1, grants: { lease_seconds: LEASE_SECONDS } };
    });
    const env = { DATABASE_URL: pg.databaseUrl, GATEWAY_ADMIN_TOKEN: TOKEN, GATEWAY_CONFIG: config.configFile };
    [a, b] = await Promise.all([spawnGateway(env), spawnGateway(env)]);
  }, 120_000);
  afterAll(async () => {
    for (const g of [a, b].filter(Boolean)) { try { process.kill(g.child.pid!, 'SIGCONT'); } catch { /* gone */ } }
    await Promise.all([a, b].filter(Boolean).map((g) => kill9(g.child)));
    await pg?.dispose();
  }, 60_000);

  async function admin<T = any>(gw: GatewayProcess, method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${gw.url}/admin${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  }
  const chat = (gw: GatewayProcess, key: string, maxTokens = 64) => fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: maxTokens, messages: [{ role: 'user', content: 'grants across replicas' }] }),
  });
  const fault = async (gw: GatewayProcess, body: unknown): Promise<void> => {
    const res = await fetch(`${gw.simUrl}/__sim/faults`, { method: body ? 'POST' : 'DELETE', headers: { 'content-type': 'application/json' }, body: body ? JSON.stringify(body) : undefined });
    await res.text();
  };
  /** The reserve one request of `chat(.., maxTokens)` needs, read from a 402 at zero balance. */
  async function quoteOf(maxTokens: number): Promise<bigint> {
    const probe = await admin<{ id: string; key: string }>(a, 'POST', '/accounts', { balance_usd: '0' });
    const res = await chat(a, probe.key, maxTokens);
    const message = (await res.json() as { error: { message: string } }).error.message;
    return parseUsd(/needs \$([0-9.]+) reserved/.exec(message)![1]!);
  }
  const metric = async (gw: GatewayProcess, line: string): Promise<number> => {
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    return Number(text.split('\n').find((l) => l.startsWith(line))?.split(' ').pop() ?? 0);
  };

  it('400 concurrent requests on both replicas against a balance for about 50: never below the credit limit, every 200 charged once, reconciled', async () => {
    const q = await quoteOf(64);
    const acct = await admin<{ id: string; key: string }>(a, 'POST', '/accounts', { balance_usd: formatNano(q * 50n) });
    let lowest = q * 50n;
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const view = await admin<{ balance_usd: string }>(a, 'GET', `/accounts/${acct.id}`);
        const balance = parseUsd(view.balance_usd);
        if (balance < lowest) lowest = balance;
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const results = await Promise.all(Array.from({ length: 400 }, async (_, i) => {
      const res = await chat(i % 2 ? b : a, acct.key, [64, 32, 16][i % 3]);
      await res.arrayBuffer();
      return { status: res.status, cost: res.headers.get('x-gateway-cost-usd') };
    }));
    polling = false;
    await poller;
    expect(lowest).toBeGreaterThanOrEqual(0n);
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThan(40);
    expect(results.every((r) => r.status === 200 || r.status === 402)).toBe(true);
    // Both replicas post what they answered (a flush interval), then the usage rows are the 200s' costs.
    await new Promise((r) => setTimeout(r, 500));
    const usage = await admin<{ data: Array<{ amount_usd: string }> }>(a, 'GET', `/accounts/${acct.id}/usage?limit=500`);
    expect(usage.data).toHaveLength(ok.length);
    const answered = ok.reduce((sum, r) => sum + parseUsd(r.cost!), 0n);
    expect(usage.data.reduce((sum, r) => sum + parseUsd(r.amount_usd), 0n)).toBe(answered);
    const reconcile = await admin<{ ok: boolean }>(b, 'GET', '/reconcile');
    expect(reconcile.ok).toBe(true);
  }, 120_000);

  it('with a balance for exactly 20 quotes and a grant on each replica, 20 requests in flight succeed on one replica, the next is 402, and a reclaim is counted', async () => {
    const q = await quoteOf(64);
    const acct = await admin<{ id: string; key: string }>(a, 'POST', '/accounts', { balance_usd: formatNano(q * 40n) });
    // Both replicas open a grant (a request each, then a flush), then the balance is cut to 20 quotes.
    for (const gw of [a, b]) { const res = await chat(gw, acct.key); expect(res.status).toBe(200); await res.text(); }
    await new Promise((r) => setTimeout(r, 400));
    const holds = await admin<{ data: Array<{ kind: string; amount_usd: string }> }>(a, 'GET', `/accounts/${acct.id}/holds`);
    expect(holds.data.filter((h) => h.kind === 'grant')).toHaveLength(2);
    await pg.db.query('UPDATE accounts SET balance_nano = balance_nano - $2::bigint, opening_nano = opening_nano - $2::bigint WHERE id = $1', [acct.id, await spentBeyond(acct.id, q * 20n)]);
    const before = await metric(a, 'gateway_grant_reclaim_total{outcome="reclaimed"}');
    // Twenty requests held in flight on replica a (a slow upstream), then one more.
    await fault(a, { fault: { latency_ms: 1_500 } });
    const inFlight = Array.from({ length: 20 }, () => chat(a, acct.key));
    await new Promise((r) => setTimeout(r, 700));
    const extra = await chat(a, acct.key);
    expect(extra.status).toBe(402);
    await extra.text();
    const statuses = await Promise.all(inFlight.map(async (p) => { const res = await p; await res.text(); return res.status; }));
    await fault(a, null);
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(await metric(a, 'gateway_grant_reclaim_total{outcome="reclaimed"}')).toBeGreaterThan(before);
  }, 120_000);

  it('with the other replica paused (SIGSTOP), requests that need its grant are 402 until the sweeper closes it', async () => {
    const q = await quoteOf(64);
    const acct = await admin<{ id: string; key: string }>(a, 'POST', '/accounts', { balance_usd: formatNano(q * 40n) });
    const warm = await chat(b, acct.key);
    expect(warm.status).toBe(200);
    await warm.text();
    await new Promise((r) => setTimeout(r, 400));
    process.kill(b.child.pid!, 'SIGSTOP');
    try {
      // b's grant holds part of the balance; what is left is taken by requests in flight on a.
      await pg.db.query('UPDATE accounts SET balance_nano = 0, opening_nano = opening_nano - balance_nano WHERE id = $1', [acct.id]);
      const stopped = await chat(a, acct.key);
      expect(stopped.status).toBe(402);
      await stopped.text();
      // Within a lease and a sweep, b's grant is closed and its unspent headroom back in the balance.
      const deadline = Date.now() + (LEASE_SECONDS + 5) * 1000;
      let status = 402;
      while (status === 402 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 250));
        const res = await chat(a, acct.key);
        status = res.status;
        await res.text();
      }
      expect(status).toBe(200);
    } finally {
      process.kill(b.child.pid!, 'SIGCONT');
    }
    const reconcile = await admin<{ ok: boolean }>(a, 'GET', '/reconcile');
    expect(reconcile.ok).toBe(true);
  }, 120_000);

  /** What must go from the balance so that `available` is what the account has left (grants counted as its own). */
  async function spentBeyond(accountId: string, available: bigint): Promise<string> {
    const [row] = await pg.db.query<{ balance: string; granted: string }>(
      `SELECT a.balance_nano::text AS balance, (SELECT coalesce(sum(amount_nano), 0) FROM holds WHERE account_id = a.id AND closed_at IS NULL)::text AS granted
       FROM accounts a WHERE a.id = $1`, [accountId]);
    return (BigInt(row!.balance) + BigInt(row!.granted) - available).toString();
  }
});

function formatNano(nano: bigint): string {
  const whole = nano / 1_000_000_000n;
  const frac = (nano % 1_000_000_000n).toString().padStart(9, '0');
  return `${whole}.${frac}`;
}
