/**
 * kill -9 of a gateway serving on credit grants (issue 30), under steady non-streaming and streaming
 * load: what it answered and never posted is at most U per account, nothing is charged beyond what
 * was answered, and its grants are closed within a lease and a sweep by the next process on the
 * store. PostgreSQL and PGlite (one process at a time on the data folder).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseUsd } from '../../src/money.js';
import { openDb, type Db } from '../../src/store/db.js';
import { copyConfig } from '../helpers/config.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';
import { kill9, spawnGateway, type GatewayProcess } from '../helpers/process.js';

const TOKEN = 'grants-crash-admin-token-0123456789';
const LEASE_SECONDS = 2;
/**
 * U: billing.grants.max_unposted_usd of this test's configuration, about two answers' worth, and a
 * flush every half second: without the bound, answers would pile up unposted for a whole interval.
 */
const U_USD = '0.00003';

describeStore(`kill -9 on credit grants (${storeKind})`, () => {
  let pg: Awaited<ReturnType<typeof openTestDb>> | undefined;
  let dataDir: string | undefined;
  let configFile: string;
  const children: GatewayProcess[] = [];

  beforeAll(async () => {
    if (storeKind === 'postgres') pg = await openTestDb();
    else dataDir = await mkdtemp(join(tmpdir(), 'gw-grants-crash-'));
    const config = await copyConfig();
    await config.editYaml('gateway.config.yaml', (doc) => {
      doc.billing = { ...doc.billing, sweep_interval_seconds: 1, hold_ttl_seconds: 3, grants: { lease_seconds: LEASE_SECONDS, max_unposted_usd: U_USD, flush_ms: 500 } };
    });
    configFile = config.configFile;
  }, 60_000);
  afterAll(async () => {
    await Promise.all(children.map((g) => kill9(g.child)));
    await pg?.dispose();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  const start = async (): Promise<GatewayProcess> => {
    const gw = await spawnGateway({ GATEWAY_ADMIN_TOKEN: TOKEN, GATEWAY_CONFIG: configFile, DATABASE_URL: pg?.databaseUrl, GATEWAY_DATA_DIR: pg ? undefined : dataDir });
    children.push(gw);
    return gw;
  };
  async function admin<T = any>(gw: GatewayProcess, method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${gw.url}/admin${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  }
  async function withStore<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    if (pg) return fn(pg.db);
    const db = await openDb({ dataDir: dataDir! });
    try { return await fn(db); } finally { await db.close(); }
  }

  it('answered minus charged is at most U, nothing is charged beyond what was answered, and the grants close within a lease and a sweep', async () => {
    const first = await start();
    const account = await admin<{ id: string; key: string }>(first, 'POST', '/accounts', { balance_usd: '20' });
    const chat = (stream: boolean, signal?: AbortSignal) => fetch(`${first.url}/v1/chat/completions`, {
      method: 'POST', signal, headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream, max_tokens: 64, messages: [{ role: 'user', content: 'steady load' }] }),
    });
    // Non-streaming answers carry their charge: what the client was answered, request by request.
    const answered = new Map<string, bigint>();
    let running = true;
    const aborter = new AbortController();
    const workers = Array.from({ length: 8 }, async (_, i) => {
      while (running) {
        try {
          const res = await chat(i % 4 === 3, aborter.signal);
          const body = await res.text();
          const cost = res.headers.get('x-gateway-cost-usd');
          if (res.status === 200 && cost && !body.startsWith('data:')) answered.set(res.headers.get('x-request-id')!, parseUsd(cost));
        } catch { /* cut by the kill */ }
      }
    });
    await new Promise((r) => setTimeout(r, 3_000));
    await kill9(first.child);
    const killedAt = Date.now();
    running = false;
    aborter.abort();
    await Promise.all(workers);
    expect(answered.size).toBeGreaterThan(10);

    // The next process's sweeper closes the dead one's grants once their lease runs out.
    const second = await start();
    // A lease and a sweep after the kill, with room for a loaded machine (the second process's start included).
    const deadline = Math.max(killedAt, Date.now()) + (LEASE_SECONDS + 6) * 1000;
    let open = (await admin<{ data: unknown[] }>(second, 'GET', `/accounts/${account.id}/holds`)).data.length;
    while (open > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      open = (await admin<{ data: unknown[] }>(second, 'GET', `/accounts/${account.id}/holds`)).data.length;
    }
    expect(open).toBe(0);
    await kill9(second.child); // PGlite: the store is read below, outside any gateway

    const charged = await withStore((db) => db.query<{ request_id: string; amount: string }>(
      "SELECT request_id, sum(amount_nano)::text AS amount FROM usage_rows WHERE account_id = $1 AND kind = 'tokens' GROUP BY request_id", [account.id]));
    const chargedOf = new Map(charged.map((r) => [r.request_id, BigInt(r.amount)]));
    let lost = 0n;
    for (const [requestId, cost] of answered) {
      const c = chargedOf.get(requestId) ?? 0n;
      // Each answered request is charged what it was answered, or (unposted at the kill) nothing.
      expect([0n, cost], requestId).toContain(c);
      lost += cost - c;
    }
    expect(lost).toBeLessThanOrEqual(parseUsd(U_USD));
    const lines = await withStore(async (db) => (await db.query<{ diff: string }>(`SELECT (a.opening_nano - a.balance_nano
      - coalesce((SELECT sum(amount_nano) FROM usage_rows u WHERE u.account_id = a.id), 0)
      - coalesce((SELECT sum(amount_nano) FROM holds h WHERE h.account_id = a.id AND h.closed_at IS NULL), 0))::text AS diff
      FROM accounts a WHERE a.id = $1`, [account.id])));
    expect(lines[0]!.diff).toBe('0');
  }, 120_000);
});
