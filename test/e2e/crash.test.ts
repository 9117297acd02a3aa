/**
 * kill -9 of the gateway in the middle of a stream. The request reserved a hold and was never settled;
 * after a restart on the same store the sweeper must give the hold back, leaving the ledger reconciled
 * and the account exactly at its opening balance (an unsettled request is not charged).
 *
 * Runs the built gateway (`dist/src/main.js`, built by `npm test`) as a child process: on the postgres
 * project against a fresh database, on the pglite project on an on-disk data folder so that the data
 * survives the crash.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseUsd } from '../../src/money.js';
import { openDb, type Db } from '../../src/store/db.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';
import { kill9, spawnGateway, type GatewayProcess } from '../helpers/process.js';

const ADMIN_TOKEN = 'crash-test-admin-token-0123456789';
const OPENING_USD = '5';

type Gateway = GatewayProcess;

describeStore('kill -9 mid-stream', () => {
  const children: ChildProcess[] = [];
  let pg: Awaited<ReturnType<typeof openTestDb>> | undefined;
  let dataDir: string | undefined;

  beforeAll(async () => {
    if (storeKind === 'postgres') pg = await openTestDb();
    else dataDir = await mkdtemp(join(tmpdir(), 'gw-crash-'));
  });

  afterAll(async () => {
    await Promise.all(children.map(kill9));
    await pg?.dispose();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  /** Starts the built gateway on the test store, with a 2 s hold lifetime and a 1 s sweeper. */
  async function startGateway(): Promise<Gateway> {
    const gw = await spawnGateway({
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_HOLD_TTL_SECONDS: '2', GATEWAY_SWEEP_INTERVAL_SECONDS: '1',
      DATABASE_URL: pg?.databaseUrl, GATEWAY_DATA_DIR: pg ? undefined : dataDir,
    });
    children.push(gw.child);
    return gw;
  }

  async function admin<T = any>(gw: Gateway, method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${gw.url}/admin${path}`, {
      method, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} /admin${path} answered ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  }

  /** Reads the store directly; on PGlite only while no gateway process holds the data folder. */
  async function withStore<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    if (pg) return fn(pg.db);
    const db = await openDb({ dataDir: dataDir! });
    try { return await fn(db); } finally { await db.close(); }
  }

  it('releases the hold of a killed stream after restart, charges nothing and reconciles', async () => {
    // 1. A gateway, an account, and a slow upstream stream (100 ms between chunks, thousands of tokens).
    const first = await startGateway();
    const account = await admin<{ id: string; key: string }>(first, 'POST', '/accounts', { balance_usd: OPENING_USD });
    const fault = await fetch(`${first.simUrl}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fault: { chunk_delay_ms: 100 } }) });
    expect(fault.status).toBeLessThan(300);

    const aborter = new AbortController();
    const res = await fetch(`${first.url}/v1/chat/completions`, {
      method: 'POST', signal: aborter.signal,
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, max_tokens: 4000, messages: [{ role: 'user', content: 'Tell me a long story' }] }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    while ((received.match(/^data: /gm) ?? []).length < 3) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended early:\n${received}`);
      received += decoder.decode(value, { stream: true });
    }
    expect(received).not.toContain('[DONE]');

    // 2. kill -9 while the stream is running (well within the 2 s hold lifetime).
    await kill9(first.child);
    aborter.abort();
    await reader.cancel().catch(() => undefined);

    // 3. The store shows the crash: one open hold on the account, no usage row, balance reduced by it.
    const crashed = await withStore(async (db) => {
      const holds = await db.query<{ amount_nano: string }>('SELECT amount_nano FROM holds WHERE account_id = $1 AND closed_at IS NULL', [account.id]);
      const usage = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM usage_rows WHERE account_id = $1', [account.id]);
      const [row] = await db.query<{ balance_nano: string; held_nano: string }>('SELECT balance_nano, held_nano FROM accounts WHERE id = $1', [account.id]);
      return { holds, usage: usage[0]!.n, row: row! };
    });
    expect(crashed.holds).toHaveLength(1);
    expect(BigInt(crashed.holds[0]!.amount_nano)).toBeGreaterThan(0n);
    expect(crashed.usage).toBe('0');
    expect(BigInt(crashed.row.held_nano)).toBe(BigInt(crashed.holds[0]!.amount_nano));
    expect(BigInt(crashed.row.balance_nano) + BigInt(crashed.row.held_nano)).toBe(parseUsd(OPENING_USD));

    // 4. A new process on the same store: its sweeper releases the expired hold.
    const second = await startGateway();
    const deadline = Date.now() + 20_000;
    let view = await admin(second, 'GET', `/accounts/${account.id}`);
    while (view.open_holds !== 0 && Date.now() < deadline) {
      await new Promise((ok) => setTimeout(ok, 250));
      view = await admin(second, 'GET', `/accounts/${account.id}`);
    }
    expect(view).toMatchObject({ open_holds: 0, held_usd: '0', balance_usd: OPENING_USD });

    // 5. The ledger reconciles everywhere and the killed request left no charge.
    const reconcile = await admin<{ ok: boolean; accounts: { account_id: string; difference_usd: string }[] }>(second, 'GET', '/reconcile');
    expect(reconcile.ok).toBe(true);
    expect(reconcile.accounts.map((a) => a.account_id)).toContain(account.id);
    for (const line of reconcile.accounts) expect(line.difference_usd, line.account_id).toBe('0');
    const usage = await admin<{ data: unknown[] }>(second, 'GET', `/accounts/${account.id}/usage`);
    expect(usage.data).toEqual([]);
  }, 120_000);
});

/** SIGKILL, then wait until the process is gone. */
