/**
 * Credit grants when the store goes away (issue 30). A TCP proxy sits between the gateway and
 * PostgreSQL. A flush whose answer is lost after its commit is applied once; a cut shorter than the
 * lease answers requests on grants (strict ones 503) and charges each 200 once; a cut longer than
 * the lease stops admissions at the lease's deadline and costs at most U past the credit limit.
 * PostgreSQL project only (the embedded store cannot go away).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyConfig } from '../helpers/config.js';
import { openTestDb, storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { proxyDatabase, type TcpProxy } from '../helpers/tcp-proxy.js';

const sleep = (ms: number): Promise<void> => new Promise((ok) => setTimeout(ok, ms));
const LEASE_SECONDS = 2;
/** U (billing.grants.max_unposted_usd, default "0.25"). */
const U_NANO = 250_000_000n;

interface Answer { status: number; requestId: string; code: string | null }

async function call(t: TestGateway, key: string, stream = false): Promise<Answer> {
  const res = await fetch(`${t.url}/v1/chat/completions`, {
    method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gpt-4o-mini', stream, max_tokens: 40, messages: [{ role: 'user', content: 'Tell me a story' }] }),
  });
  const body = await res.text();
  return { status: res.status, requestId: res.headers.get('x-request-id') ?? '', code: res.status === 200 ? null : (JSON.parse(body) as { error: { code: string } }).error.code };
}

(storeKind === 'postgres' ? describe : describe.skip)('credit grants through a store outage', () => {
  let proxy: TcpProxy;
  let t: TestGateway;
  let store: Awaited<ReturnType<typeof openTestDb>>;

  beforeAll(async () => {
    store = await openTestDb();
    const proxied = await proxyDatabase(store.databaseUrl!);
    proxy = proxied.proxy;
    const config = await copyConfig();
    // A flush a second (renewing the lease twice per lease): the first test queues charges between two.
    await config.editYaml('gateway.config.yaml', (doc) => { doc.billing = { ...doc.billing, sweep_interval_seconds: 1, grants: { lease_seconds: LEASE_SECONDS, flush_ms: 1_000 } }; });
    t = await startTestGateway({ configFile: config.configFile, env: { DATABASE_URL: proxied.viaProxy } });
  });
  afterAll(async () => { await t?.dispose(); await proxy?.close(); await store?.dispose(); });

  /** An account whose first request opened a credit grant, which the gateway's book has taken up. */
  async function warmAccount(usd: string): Promise<{ id: string; key: string }> {
    const account = await t.account(usd);
    expect((await call(t, account.key)).status).toBe(200);
    const live = (): boolean => t.gw.runtime.grants!.book.grantOf(account.id)?.live === true;
    for (let i = 0; i < 100 && !live(); i++) await sleep(20);
    expect(live()).toBe(true);
    return account;
  }
  /** Token rows per request id. */
  async function rowsByRequest(accountId: string): Promise<Map<string, number>> {
    const rows = await store.db.query<{ request_id: string; n: number }>(
      "SELECT request_id, count(*)::int AS n FROM usage_rows WHERE account_id = $1 AND kind = 'tokens' GROUP BY request_id", [accountId]);
    return new Map(rows.map((r) => [r.request_id, r.n]));
  }
  async function expectReconciled(): Promise<void> {
    for (const line of await t.gw.runtime.ledger.reconcile()) expect(line.differenceNano, line.accountId).toBe(0n);
  }

  it('a flush whose answer is lost after its commit is applied once', async () => {
    const account = await warmAccount('5');
    // One after another: each fits the grant's headroom, and its charge waits for the next flush.
    const answers: Answer[] = [];
    for (let i = 0; i < 4; i++) answers.push(await call(t, account.key));
    for (const a of answers) expect(a.status).toBe(200);
    // What the server answers is dropped from now on: this flush commits and its answer never comes.
    proxy.loseReplies();
    const lost = t.gw.postGrants();
    await sleep(400);
    await proxy.cut();
    await lost;
    await proxy.restore();
    await t.gw.postGrants();
    for (let i = 0; i < 100 && (await rowsByRequest(account.id)).size < 5; i++) { await sleep(50); await t.gw.postGrants(); }
    const charged = await rowsByRequest(account.id);
    for (const a of answers) expect(charged.get(a.requestId), a.requestId).toBe(1);
    expect(charged.size).toBe(answers.length + 1);
    await expectReconciled();
  }, 60_000);

  // With post: immediate every answer waits for its own post, so during a cut none is answered: the
  // two cut cases are the deferred mode's (the vitest project `immediate` runs this file too).
  const deferred = process.env.GATEWAY_GRANTS_POST === 'immediate' ? it.skip : it;

  deferred('a cut shorter than the lease: requests on grants answered, strict ones 503; each 200 charged once, each 503 not', async () => {
    const warm = await warmAccount('5');
    const cold = await t.account('5');
    await proxy.cut();
    const during = await Promise.all([call(t, warm.key), call(t, warm.key, true), call(t, cold.key), call(t, cold.key, true)]);
    expect(during.map((a) => a.status)).toEqual([200, 200, 503, 503]);
    expect(during.slice(2).map((a) => a.code)).toEqual(['store_unavailable', 'store_unavailable']);
    await proxy.restore();
    for (let i = 0; i < 100 && (await rowsByRequest(warm.id)).size < 3; i++) { await sleep(50); await t.gw.postGrants(); }
    const charged = await rowsByRequest(warm.id);
    for (const a of during.slice(0, 2)) expect(charged.get(a.requestId), a.requestId).toBe(1);
    expect((await rowsByRequest(cold.id)).size).toBe(0);
    await expectReconciled();
  }, 60_000);

  deferred('a cut longer than the lease: no admission after its deadline, and the balance ends above -(credit limit) - U', async () => {
    const warm = await warmAccount('5');
    await proxy.cut();
    expect((await call(t, warm.key)).status).toBe(200);
    await sleep(LEASE_SECONDS * 1000 + 200);
    // The lease of the last flush has run out: nothing is admitted on the grant any more.
    const late = await call(t, warm.key);
    expect([late.status, late.code]).toEqual([503, 'store_unavailable']);
    await proxy.restore();
    // The sweeper (1 s) may close the lapsed grant before the flush posts late; either way, once.
    await sleep(2_500);
    await t.gw.postGrants();
    const view = (await t.gw.runtime.ledger.getAccount(warm.id))!;
    expect(view.balanceNano).toBeGreaterThanOrEqual(-view.creditLimitNano - U_NANO);
    const charged = await rowsByRequest(warm.id);
    expect([...charged.values()].every((n) => n === 1)).toBe(true);
    expect(charged.has(late.requestId)).toBe(false);
    await expectReconciled();
  }, 60_000);
});
