/**
 * Redis going away under a running gateway (issue 8 item 2). A TCP proxy sits between the gateway and
 * the test Redis; the test cuts it under concurrent requests and restores it.
 *  - fail_closed (the default): 503 `limiter_unavailable` in the client's error format, Retry-After,
 *    nothing reserved or charged; /readyz says unavailable; one log line when it goes down (naming
 *    Redis and the URL without its password) and one when it is back; recovery is automatic.
 *  - fail_open: requests are admitted on in-memory limits, counted by gateway_limiter_fallback_total.
 * Store-independent: runs in the pglite project only.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyConfig } from '../helpers/config.js';
import { storeKind } from '../helpers/db.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { describeRedis, redisUrl } from '../helpers/redis.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

interface Line { message: string; fields: Record<string, unknown>; level: string }

const chat = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello' }], max_tokens: 20 };

async function post(t: TestGateway, key: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; json: any }> {
  const res = await fetch(`${t.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, headers: res.headers, json: await res.json() };
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
    const before = await t.gw.runtime.ledger.getAccount(account.id);

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
    const during = await t.gw.runtime.ledger.getAccount(account.id);
    expect(during).toEqual(before);
    expect((await t.gw.runtime.ledger.listUsage(account.id)).data).toHaveLength(1);

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
    expect((await t.gw.runtime.ledger.listUsage(account.id)).data).toHaveLength(5);

    const metrics = await (await fetch(`${t.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).text();
    expect(metrics).toMatch(/^gateway_limiter_fallback_total 5$/m);
    const warnings = lines.filter((l) => /Redis/.test(l.message));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 'warn', message: 'Redis limiter backend unavailable: admitting on in-memory limits (fail_open)' });

    await proxy.restore();
    await until('readiness after Redis returns', async () => (await ready(t)).status === 200);
  }, 60_000);
});
