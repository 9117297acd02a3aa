/**
 * Redis going away under a running gateway (issue 8 item 2). A TCP proxy sits between the gateway and
 * the test Redis; the test cuts it under concurrent requests and restores it.
 *  - fail_closed (the default): 503 `limiter_unavailable` in the client's error format, Retry-After,
 *    nothing reserved or charged; /readyz says unavailable; one log line when it goes down (naming
 *    Redis and the URL without its password) and one when it is back; recovery is automatic.
 *  - under concurrent load across the cut and the restore (workers streaming and not, as in
 *    store-outage.test.ts): every answer a 200 or a 503 limiter_unavailable, never a 500; each 200
 *    charged once and each 503 not at all; every hold closes and `gateway reconcile` passes; the
 *    concurrency slots of requests that ended during the outage do not stay taken;
 *  - fail_open: requests are admitted on in-memory limits, counted by gateway_limiter_fallback_total,
 *    and those limits are the account's own (a requests-per-minute override applies: 429 past it).
 * Store-independent: runs in the pglite project only.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { copyConfig } from '../helpers/config.js';
import { storeKind } from '../helpers/db.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { startWorkers } from '../helpers/load.js';
import { describeRedis, redisUrl } from '../helpers/redis.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

interface Line { message: string; fields: Record<string, unknown>; level: string }

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 };

async function post(t: TestGateway, key: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; json: any }> {
  const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, json: await res.json() };
}

const sleep = (ms: number): Promise<void> => new Promise((ok) => setTimeout(ok, ms));

interface Answer { status: number; requestId: string; code: string | null; retryAfter: string | null; body: string }

/** One chat request, streaming or not; a network failure is status 0. */
async function call(t: TestGateway, key: string, stream: boolean): Promise<Answer> {
  try {
    const res = await fetch(`${t.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...chat, stream, max_tokens: 40 }),
    });
    const body = await res.text();
    const code = res.status === 200 ? null : (JSON.parse(body) as { error: { code: string } }).error.code;
    return { status: res.status, requestId: res.headers.get('x-request-id') ?? '', code, retryAfter: res.headers.get('retry-after'), body };
  } catch (error) {
    return { status: 0, requestId: '', code: String(error), retryAfter: null, body: '' };
  }
}

/** PATCH /admin/accounts/{id} {limits}. */
async function setLimits(t: TestGateway, accountId: string, limits: Record<string, number | null>): Promise<void> {
  const res = await fetch(`${t.url}/admin/accounts/${accountId}`, {
    method: 'PATCH', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ limits }),
  });
  expect(res.status, await res.text()).toBe(200);
}

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
}

async function ready(t: TestGateway): Promise<{ status: number; body: any }> {
  const res = await fetch(`${t.url}/readyz`);
  return { status: res.status, body: await res.json() };
}

/** A gateway whose REDIS_URL goes through a proxy, with a password in the URL (Redis has none: ioredis warns and goes on). */
async function gatewayBehindProxy(policy: 'fail_closed' | 'fail_open'): Promise<{ t: TestGateway; proxy: TcpProxy; lines: Line[]; url: string }> {
  const target = new URL(redisUrl);
  const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  const config = await copyConfig();
  await config.editYaml('gateway.config.yaml', (doc) => { doc.limits.on_backend_error = policy; });
  const lines: Line[] = [];
  const url = `redis://:not-a-real-password@127.0.0.1:${proxy.port}/0`;
  const t = await startTestGateway({
    configFile: config.configFile,
    env: { REDIS_URL: url, GATEWAY_REDIS_PREFIX: `gwtest:${randomBytes(4).toString('hex')}:` },
    log: (message, fields = {}, level = 'info') => { lines.push({ message, fields, level }); },
  });
  return { t, proxy, lines, url };
}

const describeOnce = storeKind === 'pglite' ? describeRedis : describe.skip;

describeOnce('Redis outage, fail_closed', () => {
  let t: TestGateway;
  let proxy: TcpProxy;
  let lines: Line[];
  beforeAll(async () => { ({ t, proxy, lines } = await gatewayBehindProxy('fail_closed')); });
  afterAll(async () => { await t?.dispose(); await proxy?.close(); });

  it('answers 503 limiter_unavailable with Retry-After, charges nothing, says so once, and recovers by itself', async () => {
    const account = await t.account('5');
    expect((await post(t, account.key, '/v1/chat/completions', chat)).status).toBe(200);
    expect((await ready(t)).status).toBe(200);
    const before = await t.settled(account.id);

    await proxy.cut();
    const answers = await Promise.all(Array.from({ length: 12 }, () => post(t, account.key, '/v1/chat/completions', chat)));
    for (const a of answers) {
      expect(a.status).toBe(503);
      expect(a.headers.get('retry-after')).toBe('1');
      expect(a.json.error).toMatchObject({ code: 'limiter_unavailable', type: 'server_error' });
    }
    // The messages format answers in its own error shape.
    const messages = await post(t, account.key, '/v1/messages', { model: 'claude-sonnet-4-5', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] }, { 'anthropic-version': '2023-06-01' });
    expect(messages.status).toBe(503);
    expect(messages.json).toMatchObject({ type: 'error', error: { type: 'api_error' } });

    const down = await ready(t);
    expect(down.status).toBe(503);
    expect(down.body).toMatchObject({ status: 'unavailable', checks: { limiter: { status: 'unavailable' }, store: { status: 'ok' }, config: { status: 'ok' } } });
    expect(down.body.checks.limiter.target).not.toContain('not-a-real-password');

    // Nothing reserved or charged.
    const during = await t.settled(account.id);
    expect(during).toEqual(before);
    expect((await t.usage(account.id)).data).toHaveLength(1);

    await proxy.restore();
    await until('readiness after Redis returns', async () => (await ready(t)).status === 200);
    expect((await post(t, account.key, '/v1/chat/completions', chat)).status).toBe(200);

    // One line when it went down, one when it came back; Redis named, the password never shown.
    const outage = lines.filter((l) => /Redis/.test(l.message));
    expect(outage.map((l) => [l.level, l.message])).toEqual([
      ['error', 'Redis limiter backend unavailable: requests answer 503 limiter_unavailable (fail_closed)'],
      ['info', 'Redis limiter backend recovered'],
    ]);
    expect(String(outage[0]!.fields.limiter)).toContain(`127.0.0.1:${proxy.port}`);
    expect(JSON.stringify(lines)).not.toContain('not-a-real-password');
  }, 60_000);

  it('under concurrent load across the cut and the restore: 200 or 503 limiter_unavailable, each 200 charged once, holds closed, reconciled', async () => {
    const account = await t.account('50');
    // Six clients, half of them streaming, through the cut and the restore.
    const workers = startWorkers(6, (i) => call(t, account.key, i % 2 === 0));
    const answers = workers.results;
    await sleep(800);
    await proxy.cut();
    await sleep(1_500);
    // Fresh requests during the cut are refused deterministically, whatever the workers were doing.
    const refused = await Promise.all([call(t, account.key, false), call(t, account.key, true)]);
    answers.push(...refused);
    for (const a of refused) expect([a.status, a.code, a.retryAfter]).toEqual([503, 'limiter_unavailable', '1']);
    await proxy.restore();
    await until('readiness after Redis returns', async () => (await ready(t)).status === 200);
    await sleep(800);
    await workers.stop();

    const statuses = new Set(answers.map((a) => a.status));
    expect([...statuses].sort(), JSON.stringify(answers.filter((a) => a.status !== 200 && a.status !== 503).slice(0, 3))).toEqual([200, 503]);
    for (const a of answers.filter((x) => x.status === 503)) expect(a.code).toBe('limiter_unavailable');
    for (const a of answers.filter((x) => x.status === 200 && x.body.startsWith('data:'))) expect(a.body).toContain('data: [DONE]');

    // Every hold closes; exactly one usage row per answered request, none for a refused one.
    await until('every hold closed', async () => (await t.settled(account.id))!.openHolds === 0, 30_000);
    const rows = await t.gw.db.query<{ request_id: string; n: number }>(
      'SELECT request_id, count(*)::int AS n FROM usage_rows WHERE account_id = $1 GROUP BY request_id', [account.id]);
    const charged = new Map(rows.map((r) => [r.request_id, r.n]));
    const ok = answers.filter((a) => a.status === 200).map((a) => a.requestId);
    for (const id of ok) expect(charged.get(id), id).toBe(1);
    for (const a of answers.filter((x) => x.status === 503)) expect(charged.has(a.requestId), a.requestId).toBe(false);
    expect(charged.size).toBe(ok.length);

    let out = '';
    const code = await runCli(['reconcile'], { GATEWAY_URL: t.url, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN }, { out: (x) => void (out += x), err: (x) => void (out += x) });
    expect(code, out).toBe(0);

    // The concurrency slots of requests that were running when Redis went away are free again: one
    // more request passes under a limit of one concurrent request.
    await setLimits(t, account.id, { concurrent_requests: 1 });
    const after = await call(t, account.key, false);
    expect([after.status, after.code], after.body).toEqual([200, null]);
  }, 90_000);
});

describeOnce('Redis outage, fail_open', () => {
  let t: TestGateway;
  let proxy: TcpProxy;
  let lines: Line[];
  beforeAll(async () => { ({ t, proxy, lines } = await gatewayBehindProxy('fail_open')); });
  afterAll(async () => { await t?.dispose(); await proxy?.close(); });

  it('admits on in-memory limits, counts it in a metric, warns once', async () => {
    const account = await t.account('5');
    await proxy.cut();
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(t, account.key, '/v1/chat/completions', chat)));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    expect((await t.usage(account.id)).data).toHaveLength(5);

    const metrics = await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(metrics).toMatch(/^gateway_limiter_fallback_total 5$/m);
    const warnings = lines.filter((l) => /Redis/.test(l.message));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 'warn', message: 'Redis limiter backend unavailable: admitting on in-memory limits (fail_open)' });

    await proxy.restore();
    await until('readiness after Redis returns', async () => (await ready(t)).status === 200);
  }, 60_000);

  it('applies the account\'s own limits in memory: past its requests per minute, 429 with Retry-After', async () => {
    const account = await t.account('5');
    await setLimits(t, account.id, { requests_per_minute: 3 });
    await proxy.cut();
    try {
      const answers: Answer[] = [];
      for (let i = 0; i < 4; i++) answers.push(await call(t, account.key, false));
      expect(answers.map((a) => a.status), answers.at(-1)!.body).toEqual([200, 200, 200, 429]);
      expect(Number(answers[3]!.retryAfter)).toBeGreaterThan(0);
      expect((await t.usage(account.id)).data).toHaveLength(3);
    } finally {
      await proxy.restore();
    }
    await until('readiness after Redis returns', async () => (await ready(t)).status === 200);
  }, 60_000);
});
