/**
 * A wrong or dead REDIS_URL at start (issue 8 item 2): the built gateway (`dist/src/main.js`) started
 * with REDIS_URL pointing at a closed loopback port still starts and says so on its start line (naming
 * Redis, never the password); /healthz is 200 and /readyz 503 with the limiter check unavailable; a
 * request is refused with 503 `limiter_unavailable` and Retry-After (fail_closed, the default), not a
 * 500; the outage is logged once, with no stack trace. A REDIS_URL that is not a redis: URL stops the
 * start with a message naming REDIS_URL. Store-independent: pglite project only.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { storeKind } from '../helpers/db.js';
import { kill9, spawnGateway } from '../helpers/process.js';

const ADMIN_TOKEN = 'redis-start-test-admin-token-0123456789';
const PASSWORD = 'not-a-real-password';

/** A loopback port nothing listens on: bound to port 0, read, closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

describe.skipIf(storeKind !== 'pglite')('a dead or wrong REDIS_URL at start', () => {
  const children: ChildProcess[] = [];
  afterAll(async () => { await Promise.all(children.map(kill9)); }, 30_000);

  it('starts, tells the truth on /readyz, answers 503 limiter_unavailable, and logs the outage once without a stack', async () => {
    const port = await closedPort();
    const gw = await spawnGateway({ GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_DATA_DIR: ':memory:', DATABASE_URL: undefined, REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${port}/0` });
    children.push(gw.child);
    const startLine = gw.output().split('\n').find((l) => l.startsWith('gateway listening on'))!;
    expect(startLine).toContain(`limiter redis redis://127.0.0.1:${port}/0 (on error: fail_closed)`);
    expect(startLine).not.toContain(PASSWORD);

    expect((await fetch(`${gw.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(503);
    const readiness = await ready.json() as any;
    expect(readiness).toMatchObject({ status: 'unavailable', checks: { limiter: { status: 'unavailable' }, store: { status: 'ok' } } });
    expect(JSON.stringify(readiness)).not.toContain(PASSWORD);

    const created = await fetch(`${gw.url}/admin/accounts`, {
      method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ balance_usd: '5' }),
    });
    expect(created.status).toBeLessThan(300);
    const account = await created.json() as { key: string };
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 20, messages: [{ role: 'user', content: 'hello' }] }),
      });
      const body = await res.json() as any;
      expect(res.status, JSON.stringify(body)).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(body.error).toMatchObject({ code: 'limiter_unavailable', type: 'server_error' });
    }

    const output = gw.output();
    expect(output.match(/Redis limiter backend unavailable/g), output).toHaveLength(1);
    const line = JSON.parse(output.split('\n').find((l) => l.includes('Redis limiter backend unavailable'))!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'error', limiter: `redis redis://127.0.0.1:${port}/0`, msg: 'Redis limiter backend unavailable: requests answer 503 limiter_unavailable (fail_closed)' });
    expect(output).not.toContain('\n    at ');
    expect(output).not.toContain(PASSWORD);
  }, 90_000);

  it('refuses a REDIS_URL that is not a redis: URL, naming REDIS_URL', async () => {
    const started = spawnGateway({ GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, GATEWAY_DATA_DIR: ':memory:', DATABASE_URL: undefined, REDIS_URL: 'http://x' });
    const failure = await started.then((gw) => { children.push(gw.child); return null; }, (error: Error) => error.message);
    expect(failure).toMatch(/^gateway exited \(1\):/);
    expect(failure).toContain('invalid configuration: env REDIS_URL');
    expect(failure).toContain('has protocol http: (expected redis: or rediss:)');
    expect(failure).not.toContain('\n    at ');
  }, 60_000);
});
