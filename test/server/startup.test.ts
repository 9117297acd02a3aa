/** The start line (issue 8 item 7): store, limiter, admin API and each provider, never a password. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeStore, startupLine } from '../../src/server/startup.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

describe('describeStore', () => {
  it('names the embedded folder, or the PostgreSQL host and database without the password', () => {
    expect(describeStore(undefined, '/srv/gw/.gateway')).toBe('embedded PGlite at /srv/gw/.gateway');
    expect(describeStore(undefined, ':memory:')).toBe('in-memory PGlite (nothing kept)');
    const line = describeStore('postgres://gw:s3cret-pass@db.internal:6432/billing?sslmode=require', '/unused');
    expect(line).toBe('PostgreSQL db.internal:6432/billing');
    expect(line).not.toContain('s3cret');
    expect(describeStore('not a url', '/unused')).toBe('PostgreSQL (DATABASE_URL is not a URL)');
  });
});

describe('startupLine', () => {
  it('lists the limiter, the admin API and each provider as live (host) or simulated', () => {
    const line = startupLine({
      store: 'PostgreSQL db:5432/gw', limiter: 'redis redis://cache:6379/0 (on error: fail_closed)', adminApi: false,
      providers: [{ id: 'openai', simulated: false, host: 'api.openai.com' }, { id: 'anthropic', simulated: true, host: '127.0.0.1:9' }],
    });
    expect(line).toBe('store PostgreSQL db:5432/gw · limiter redis redis://cache:6379/0 (on error: fail_closed) · admin API off (set GATEWAY_ADMIN_TOKEN) · providers: openai live (api.openai.com), anthropic simulated');
  });
});

describe('a started gateway', () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway({ env: { OPENAI_API_KEY: 'sk-test-not-real', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' } }); });
  afterAll(async () => { await t?.dispose(); });

  it('reports what it runs on', () => {
    const facts = t.gw.facts();
    expect(facts.adminApi).toBe(true);
    expect(facts.limiter).toBe('in-memory');
    expect(facts.providers).toEqual(expect.arrayContaining([{ id: 'openai', simulated: false, host: '127.0.0.1:9' }, { id: 'anthropic', simulated: true, host: expect.any(String) }]));
  });

  it('answers /healthz and /readyz without a key', async () => {
    expect(await (await fetch(`${t.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const res = await fetch(`${t.url}/readyz`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ status: 'ok', checks: { store: { status: 'ok' }, limiter: { status: 'ok', target: 'in-memory' }, config: { status: 'ok', last_reload: null } } });
    expect(body.checks.config.routes).toBeGreaterThan(0);
    expect(body.checks.config.offerings).toBeGreaterThan(0);
  });
});
