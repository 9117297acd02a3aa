/**
 * Scale-out (issue 4): two gateway processes on one PostgreSQL and one Redis share a per-account
 * limit and a balance; SIGTERM drains a stream in flight to its end and settles it before exit.
 * PostgreSQL only: two processes cannot share a PGlite folder. Required under CI (describeStore
 * and describeRedis fail instead of skipping when a server is unreachable).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';
import { kill9, spawnGateway, type GatewayProcess } from '../helpers/process.js';
import { describeRedis, redisUrl } from '../helpers/redis.js';
import { SseParser } from '../../src/translate/sse.js';

const TOKEN = 'scale-out-admin-token-0123456789';

const postgresOnly = storeKind === 'postgres' ? describeStore : describe.skip;

postgresOnly('two gateway processes on one PostgreSQL and one Redis', () => {
  describeRedis('shared limits and money', () => {
    let pg: Awaited<ReturnType<typeof openTestDb>>;
    let a: GatewayProcess;
    let b: GatewayProcess;

    beforeAll(async () => {
      pg = await openTestDb();
      const env = { DATABASE_URL: pg.databaseUrl, REDIS_URL: redisUrl, GATEWAY_REDIS_PREFIX: `gwt:${randomBytes(4).toString('hex')}:`, GATEWAY_ADMIN_TOKEN: TOKEN, GATEWAY_DRAIN_SECONDS: '20' };
      [a, b] = await Promise.all([spawnGateway(env), spawnGateway(env)]);
    }, 120_000);
    afterAll(async () => {
      await Promise.all([a, b].filter(Boolean).map((g) => kill9(g.child)));
      await pg?.dispose();
    }, 60_000);

    async function admin<T>(gw: GatewayProcess, method: string, path: string, body?: unknown): Promise<T> {
      const res = await fetch(`${gw.url}/admin${path}`, { method, headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return JSON.parse(text) as T;
    }
    const chat = (gw: GatewayProcess, key: string, extra: Record<string, unknown> = {}) => fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'scale out' }], ...extra }),
    });

    it('enforces one per-account request limit across both processes', async () => {
      const acct = await admin<{ id: string; key: string }>(a, 'POST', '/accounts', { balance_usd: '5' });
      await admin(b, 'PATCH', `/accounts/${acct.id}`, { limits: { requests_per_minute: 10 } });
      const statuses: number[] = [];
      for (let i = 0; i < 20; i++) {
        const res = await chat(i % 2 ? b : a, acct.key);
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      const ok = statuses.filter((s) => s === 200).length;
      // Ten fit; the bucket refills one request per 6 s, so a slow run may admit one more. Per-process
      // limiters would have admitted all twenty.
      expect(ok).toBeGreaterThanOrEqual(10);
      expect(ok).toBeLessThanOrEqual(11);
      expect(statuses.filter((s) => s === 429)).toHaveLength(20 - ok);
    });

    it('never overspends one balance from both processes, and the books reconcile', async () => {
      const acct = await admin<{ id: string; key: string }>(a, 'POST', '/accounts', { balance_usd: '0.0002', credit_limit_usd: '0.00001' });
      const statuses = await Promise.all(Array.from({ length: 80 }, (_, i) => chat(i % 2 ? b : a, acct.key).then(async (r) => { await r.arrayBuffer(); return r.status; })));
      expect(statuses.filter((s) => s !== 200 && s !== 402)).toEqual([]);
      expect(statuses.filter((s) => s === 402).length).toBeGreaterThan(0);
      const view = await admin<{ balance_usd: string; held_usd: string; open_holds: number }>(b, 'GET', `/accounts/${acct.id}`);
      // Every request's hold is closed; what stays open is credit grants (issue 30), never below the limit.
      const holds = await admin<{ data: Array<{ kind: string }> }>(b, 'GET', `/accounts/${acct.id}/holds`);
      expect(holds.data.filter((h) => h.kind === 'request')).toEqual([]);
      expect(Number(view.balance_usd)).toBeGreaterThanOrEqual(-0.00001);
      const books = await admin<{ ok: boolean }>(a, 'GET', '/reconcile');
      expect(books.ok).toBe(true);
    });

    it('drains on SIGTERM: the stream in flight completes and is billed, then the process exits 0', async () => {
      const acct = await admin<{ id: string; key: string }>(a, 'POST', '/accounts', { balance_usd: '1' });
      await fetch(`${a.simUrl}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ fault: { chunk_delay_ms: 40, answer_words: 40, times: 1 } }) });
      const res = await chat(a, acct.key, { stream: true, max_tokens: 40 });
      expect(res.status).toBe(200);
      const reader = res.body!.getReader();
      const first = await reader.read();
      a.child.kill('SIGTERM');
      const parser = new SseParser();
      let done = false;
      for (let chunk = first; !chunk.done; chunk = await reader.read()) {
        for (const e of parser.push(new TextDecoder().decode(chunk.value))) if (e.data === '[DONE]') done = true;
      }
      expect(done).toBe(true);
      expect(await a.exited).toBe(0);
      // The other process still serves, and sees the drained request settled.
      const usage = await admin<{ data: Array<{ kind: string; quantity: number }> }>(b, 'GET', `/accounts/${acct.id}/usage`);
      expect(usage.data).toHaveLength(1);
      expect(usage.data[0]!.kind).toBe('tokens');
      const view = await admin<{ open_holds: number }>(b, 'GET', `/accounts/${acct.id}`);
      expect(view.open_holds).toBe(0);
      await expect(fetch(`${a.url}/healthz`)).rejects.toThrow();
    });
  });
});
