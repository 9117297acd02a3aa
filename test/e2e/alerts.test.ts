/**
 * Alerts end to end (issue 33 item 3): `alerts:` in gateway.config.yaml, real requests spending an
 * account below its threshold, the jobs run through the admin API, a signed webhook received once per
 * crossing; an account's own threshold by PATCH /admin/accounts/{id}; the outbox surviving a restart
 * while the receiver is down; on PostgreSQL, two replicas delivering each event once.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { AlertOutbox } from '../../src/alerts/outbox.js';
import { startAlertReceiver, type AlertReceiver } from '../helpers/alert-receiver.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { addOpenaiOfferings, chatOffering } from '../helpers/routing.js';
import { describeStore, openTestDb, storeKind } from '../helpers/db.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';

const SECRET = 'e2e-alert-secret';

/** Waits (up to 10 s) for `done`; the assertions after it say what was missing. */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !done(); i++) await new Promise((r) => setTimeout(r, 100));
}

describeStore('alerts end to end', () => {
  let receiver: AlertReceiver;
  let copy: ConfigCopy;
  beforeAll(async () => {
    receiver = await startAlertReceiver();
    copy = await copyConfig();
    await copy.editYaml('gateway.config.yaml', (doc) => {
      doc.alerts = { check_seconds: 1, webhooks: [{ url: receiver.url, secret: 'env:ALERTS_TEST_SECRET', events: ['balance.low', 'key.budget_reached', 'deployment.circuit_opened', 'deployment.recovered'] }] };
      doc.routing = { ...(doc.routing ?? {}), circuit: { failures: 3, window_seconds: 30, open_seconds: 1 } };
    });
    // Two deployments, so that requests still succeed while one fails and its circuit opens.
    await addOpenaiOfferings(copy, [chatOffering('alerted', { deployments: [{ provider: 'openai', upstream_model: 'al-a' }, { provider: 'openai', upstream_model: 'al-b' }] })]);
  });
  afterAll(() => receiver?.close());

  const env = { ALERTS_TEST_SECRET: SECRET };
  const admin = async (t: TestGateway, method: 'POST' | 'PATCH', path: string, body?: unknown) => {
    const res = await request(`${t.url}/admin${path}`, {
      method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.statusCode, body: await res.body.json() as Record<string, any> };
  };
  const runJob = async (t: TestGateway, name: string) => (await admin(t, 'POST', `/jobs/${name}/run`)).body;

  it('spending below an account\'s threshold sends one signed balance.low per crossing', async () => {
    const t = await startTestGateway({ configFile: copy.configFile, env });
    try {
      const a = await t.account('1');
      const patched = await admin(t, 'PATCH', `/accounts/${a.id}`, { low_balance_usd: '0.9999999' });
      expect(patched).toEqual({ status: 200, body: { id: a.id, low_balance_usd: '0.9999999' } });
      expect((await admin(t, 'PATCH', `/accounts/${a.id}`, { low_balance_usd: 'lots' })).status).toBe(400);
      expect((await admin(t, 'PATCH', '/accounts/acct_missing', { low_balance_usd: '1' })).status).toBe(404);
      expect((await runJob(t, 'alerts-balance')).result).toMatchObject({ balance_low: 0 });
      const client = new OpenAI({ apiKey: a.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Spend a little.' }], max_tokens: 16 });
      await t.settled(a.id);
      // The jobs run every second on their own as well: what counts is what the receiver gets.
      await runJob(t, 'alerts-balance');
      await runJob(t, 'alerts-deliver');
      await until(() => receiver.received.some((r) => r.json.data.account_id === a.id));
      await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Spend a little more.' }], max_tokens: 16 });
      await t.settled(a.id);
      // Still below: no second event for the same crossing.
      expect((await runJob(t, 'alerts-balance')).result).toMatchObject({ balance_low: 0 });
      await runJob(t, 'alerts-deliver');
      await new Promise((r) => setTimeout(r, 1_500));
      const got = receiver.received.filter((r) => r.json.data.account_id === a.id);
      expect(got).toHaveLength(1);
      expect(got[0]!.json.type).toBe('balance.low');
      expect(got[0]!.headers['x-gateway-signature']).toBe(`sha256=${createHmac('sha256', SECRET).update(got[0]!.body).digest('hex')}`);
      const view = await t.settled(a.id);
      expect(got[0]!.json.data).toMatchObject({ threshold_usd: '0.9999999' });
      expect(BigInt(Math.round(Number(got[0]!.json.data.available_usd) * 1e9))).toBeGreaterThanOrEqual(view.balanceNano);
    } finally {
      await t.dispose();
    }
  });

  it('a key spending up to its budget sends one key.budget_reached for the period', async () => {
    const t = await startTestGateway({ configFile: copy.configFile, env });
    try {
      const a = await t.account('10');
      const keyId = (await t.gw.db.query<{ id: string }>('SELECT id FROM api_keys WHERE account_id = $1', [a.id]))[0]!.id;
      expect((await admin(t, 'PATCH', `/keys/${keyId}`, { budget_usd: '0.00001', budget_period: 'day' })).status).toBe(200);
      const client = new OpenAI({ apiKey: a.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
      let refused = 0;
      for (let i = 0; i < 30 && refused === 0; i++) {
        await client.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Spend the key.' }], max_tokens: 16 })
          .catch((error: { status?: number; code?: string }) => { expect(error.code).toBe('key_budget_exceeded'); refused += 1; });
      }
      expect(refused).toBe(1);
      await runJob(t, 'alerts-balance');
      await runJob(t, 'alerts-deliver');
      const reached = () => receiver.received.filter((r) => r.json.type === 'key.budget_reached' && r.json.data.key_id === keyId);
      await until(() => reached().length > 0);
      await runJob(t, 'alerts-balance');
      await runJob(t, 'alerts-deliver');
      await new Promise((r) => setTimeout(r, 1_500));
      expect(reached()).toHaveLength(1);
      expect(reached()[0]!.json.data).toMatchObject({ account_id: a.id, budget_usd: '0.00001', budget_period: 'day' });
    } finally {
      await t.dispose();
    }
  });

  it('a deployment\'s circuit opening and recovering sends its two events', async () => {
    const t = await startTestGateway({ configFile: copy.configFile, env });
    try {
      const a = await t.account('10');
      const client = new OpenAI({ apiKey: a.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
      await t.fault({ status: 503 }, 'al-b');
      const opened = () => receiver.received.find((r) => r.json.type === 'deployment.circuit_opened' && r.json.data.deployment === 'openai/al-b');
      for (let i = 0; i < 40 && !opened(); i++) {
        await client.chat.completions.create({ model: 'alerted', messages: [{ role: 'user', content: 'Who answers?' }], max_tokens: 8 });
        await runJob(t, 'alerts-deliver');
      }
      expect(opened()?.json.data.replica).toEqual(expect.any(String));
      await t.clearFaults();
      // Past open_seconds, a request probes al-b; its success closes the circuit.
      const recovered = () => receiver.received.find((r) => r.json.type === 'deployment.recovered' && r.json.data.deployment === 'openai/al-b');
      for (let i = 0; i < 60 && !recovered(); i++) {
        await new Promise((r) => setTimeout(r, 100));
        await client.chat.completions.create({ model: 'alerted', messages: [{ role: 'user', content: 'Who answers now?' }], max_tokens: 8 });
        await runJob(t, 'alerts-deliver');
      }
      expect(recovered()).toBeDefined();
    } finally {
      await t.dispose();
    }
  });

  it('an event written while the receiver is down is delivered after a restart', async () => {
    const pg = storeKind === 'postgres' ? await openTestDb() : null;
    const dataDir = pg ? null : await mkdtemp(join(tmpdir(), 'gw-alerts-'));
    const store: Record<string, string> = pg ? { DATABASE_URL: pg.databaseUrl! } : { GATEWAY_DATA_DIR: dataDir! };
    receiver.status = 503;
    let eventId = '';
    try {
      const first = await startTestGateway({ configFile: copy.configFile, env: { ...env, ...store } });
      try {
        const a = await first.account('0.5');
        expect((await admin(first, 'PATCH', `/accounts/${a.id}`, { low_balance_usd: '1' })).status).toBe(200);
        expect((await runJob(first, 'alerts-balance')).result).toMatchObject({ balance_low: 1 });
        expect((await runJob(first, 'alerts-deliver')).result).toMatchObject({ delivered: 0, retried: 1 });
        const [row] = await first.gw.db.query<{ id: string }>('SELECT id FROM alert_events WHERE account_id = $1', [a.id]);
        eventId = row!.id;
      } finally {
        await first.dispose();
      }
      receiver.status = 200;
      const second = await startTestGateway({ configFile: copy.configFile, env: { ...env, ...store } });
      try {
        // The job runs every second; the retry is due 1 s after the first attempt.
        await until(() => receiver.received.some((r) => r.json.id === eventId));
        expect(receiver.received.filter((r) => r.json.id === eventId)).toHaveLength(1);
      } finally {
        await second.dispose();
      }
    } finally {
      receiver.status = 200;
      await pg?.dispose();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    }
  });

  it.runIf(storeKind === 'postgres')('two replicas on one PostgreSQL deliver each event once', async () => {
    const pg = await openTestDb();
    const replicas = [
      await startTestGateway({ configFile: copy.configFile, env: { ...env, DATABASE_URL: pg.databaseUrl! } }),
      await startTestGateway({ configFile: copy.configFile, env: { ...env, DATABASE_URL: pg.databaseUrl! } }),
    ];
    try {
      const outbox = new AlertOutbox(replicas[0]!.gw.db, { now: () => new Date() }, () => replicas[0]!.gw.generation().gateway.settings.alerts);
      const ids: string[] = [];
      for (let i = 0; i < 30; i++) ids.push((await outbox.circuit(`openai/replica-test-${i}`, true))!.id);
      // Both replicas' jobs run on their schedules, and both are asked to run at once as well.
      // (Each answers ran: false while another run holds the job, its own scheduled one included.)
      await Promise.all(replicas.flatMap((r) => [runJob(r, 'alerts-deliver'), runJob(r, 'alerts-deliver')]));
      await until(() => ids.every((id) => receiver.received.some((r) => r.json.id === id)));
      await new Promise((r) => setTimeout(r, 1_500)); // a later run of either replica sends nothing again
      for (const id of ids) expect(receiver.received.filter((r) => r.json.id === id)).toHaveLength(1);
    } finally {
      for (const r of replicas) await r.dispose();
      await pg.dispose();
    }
  });
});
