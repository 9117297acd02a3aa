/**
 * kill -9 of the gateway in the middle of a stream (issue 8 item 5). The request reserved a hold and
 * was never settled, but its keep-alive recorded on the hold the usage delivered so far; after a
 * restart on the same store the sweeper settles that checkpoint when the hold expires and gives the
 * rest back: the client pays for what it received (within one checkpoint), and the ledger reconciles.
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
import { countTextTokens } from '../../src/tokenize.js';
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

  /**
   * Starts the built gateway on the test store: a 6 s hold lifetime (room for a loaded machine to stall
   * a tick), a checkpoint every second and a 1 s sweeper.
   */
  async function startGateway(): Promise<Gateway> {
    const gw = await spawnGateway({
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_HOLD_TTL_SECONDS: '6', GATEWAY_CHECKPOINT_SECONDS: '1', GATEWAY_SWEEP_INTERVAL_SECONDS: '1',
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

  // Cold: the stream is the account's first request, reserved on its own (the strict path); warm: a
  // request before it opened a credit grant (issue 30), the stream runs on it and the flusher records
  // its checkpoints on the grant, which the sweeper settles once the dead process's lease runs out.
  it.each([['cold', false], ['on a credit grant', true]])('bills the content delivered before a kill -9 (up to the last checkpoint), gives the rest back and reconciles (%s)', async (_name, warm) => {
    // 1. A gateway, an account, and a slow upstream stream (100 ms between chunks, thousands of tokens).
    const first = await startGateway();
    expect(first.output()).toMatch(/store (embedded PGlite at \S+|PostgreSQL \S+) · limiter in-memory · admin API on · providers: .*simulated/);
    const account = await admin<{ id: string; key: string }>(first, 'POST', '/accounts', { balance_usd: OPENING_USD });
    if (warm) await warmUp(first, account.key);
    // answer_words: a long story (the simulator's natural answer would end in about 2.5 s at this pace).
    const fault = await fetch(`${first.simUrl}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fault: { chunk_delay_ms: 100, answer_words: 4000 } }) });
    expect(fault.status).toBeLessThan(300);

    const aborter = new AbortController();
    const res = await fetch(`${first.url}/v1/chat/completions`, {
      method: 'POST', signal: aborter.signal,
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', stream: true, max_tokens: 4000, messages: [{ role: 'user', content: 'Tell me a long story' }] }),
    });
    expect(res.status).toBe(200);
    // Read for about 2.5 s (two checkpoints or more), noting when each piece of content arrived.
    const body = res.body!;
    const received = await readContent(body, 2_500);
    expect(received.raw).not.toContain('[DONE]');

    // 2. kill -9 while the stream is running (well within the hold lifetime, extended as it runs).
    const killedAt = Date.now();
    await kill9(first.child);
    aborter.abort();
    await body.cancel().catch(() => undefined);

    // 3. The store shows the crash: one open hold carrying the delivered checkpoint (the stream's own
    //    reserve, or the grant it ran on), no usage row of the stream yet.
    const crashed = await withStore(async (db) => {
      const holds = await db.query<{ kind: string; delivered: Array<{ amount: string; details: { output: number } }> | null }>(
        'SELECT kind, delivered FROM holds WHERE account_id = $1 AND closed_at IS NULL AND delivered IS NOT NULL', [account.id]);
      const usage = await db.query<{ n: string }>('SELECT count(*)::text AS n FROM usage_rows WHERE account_id = $1', [account.id]);
      return { holds, usage: usage[0]!.n };
    });
    expect(crashed.holds, JSON.stringify(await withStore((db) => db.query('SELECT * FROM holds')))).toHaveLength(1);
    expect(crashed.holds[0]!.kind).toBe(warm ? 'grant' : 'request');
    expect(crashed.usage).toBe(warm ? '1' : '0');

    // 4. A new process on the same store: its sweeper settles the checkpoint when the hold expires.
    const second = await startGateway();
    // A grant's lease is 15 s (billing.grants.lease_seconds), a request's hold 6 s here.
    const deadline = Date.now() + 30_000;
    let view = await admin(second, 'GET', `/accounts/${account.id}`);
    while (view.open_holds !== 0 && Date.now() < deadline) {
      await new Promise((ok) => setTimeout(ok, 250));
      view = await admin(second, 'GET', `/accounts/${account.id}`);
    }
    expect(view).toMatchObject({ open_holds: 0, held_usd: '0' });

    // 5. One usage row, from the checkpoint: its output covers everything received more than one
    //    checkpoint interval (plus scheduling slack) before the kill, and never more than was received.
    const usage = await admin<{ data: Array<{ kind: string; amount_usd: string; details: Record<string, unknown> }> }>(second, 'GET', `/accounts/${account.id}/usage`);
    expect(usage.data).toHaveLength(warm ? 2 : 1);
    const row = usage.data[0]!;
    expect(row).toMatchObject({ kind: 'tokens', details: { settled_from: 'checkpoint', counted_by: 'gateway_tokenizer' } });
    const billedOutput = Number(row.details.output);
    const checkpointMs = 1_000;
    const covered = received.pieces.filter((p) => p.at < killedAt - checkpointMs - 300).map((p) => p.text).join('');
    expect(billedOutput).toBeGreaterThanOrEqual(countTextTokens(covered));
    expect(billedOutput).toBeLessThanOrEqual(countTextTokens(received.pieces.map((p) => p.text).join('')));
    expect(billedOutput).toBeGreaterThan(0);
    const charged = usage.data.reduce((sum, r) => sum + parseUsd(r.amount_usd), 0n);
    expect(parseUsd(view.balance_usd)).toBe(parseUsd(OPENING_USD) - charged);

    // 6. The ledger reconciles everywhere.
    const reconcile = await admin<{ ok: boolean; accounts: { account_id: string; difference_usd: string }[] }>(second, 'GET', '/reconcile');
    expect(reconcile.ok).toBe(true);
    expect(reconcile.accounts.map((a) => a.account_id)).toContain(account.id);
    for (const line of reconcile.accounts) expect(line.difference_usd, line.account_id).toBe('0');
    await kill9(second.child); // the next case opens the same data folder
  }, 120_000);

  /** One short request, answered and billed; then a moment for the flusher to open the account's grant. */
  async function warmUp(gw: Gateway, key: string): Promise<void> {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      // The same output cap as the stream's: the grant is sized to fit a few requests like it.
      body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 4000, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    await new Promise((ok) => setTimeout(ok, 500));
  }
});

/** The content of a chat stream read for `ms`, piece by piece with arrival times, and the raw text. */
async function readContent(body: ReadableStream<Uint8Array>, ms: number): Promise<{ raw: string; pieces: Array<{ at: number; text: string }> }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const pieces: Array<{ at: number; text: string }> = [];
  let raw = '';
  let buffered = '';
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`stream ended early:\n${raw}`);
    const text = decoder.decode(value, { stream: true });
    raw += text;
    buffered += text;
    const events = buffered.split('\n\n');
    buffered = events.pop()!;
    for (const event of events) {
      const data = /^data: (.*)$/m.exec(event)?.[1];
      if (!data || data === '[DONE]') continue;
      const content = (JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content;
      if (content) pieces.push({ at: Date.now(), text: content });
    }
  }
  // The reader is left open: cancelling it would close the connection, and the gateway would settle
  // the stream as a client that left (the kill -9 must find the stream still running).
  reader.releaseLock();
  return { raw, pieces };
}
