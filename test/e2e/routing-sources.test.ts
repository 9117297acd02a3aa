/**
 * Several sources for one model (issue 29 items 1, 2, 5, 7, 8): key pools (a 429 key rests while the
 * others carry on, a 401 key is taken out), weighted shares, least_inflight, priorities, the admin
 * listing and the metrics, and state held at one vendor staying there. Real HTTP through the gateway;
 * the simulator counts what each source received; money is conserved after each test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { parseUsd } from '../../src/money.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { copyConfig } from '../helpers/config.js';
import { describeStore } from '../helpers/db.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { addOpenaiOfferings, chatOffering, expectConserved, simRequests } from '../helpers/routing.js';

const MESSAGES = [{ role: 'user', content: 'Which source answers?' }];

/** A provider of the chat format with a pool of two keys, at `POOL_BASE_URL` (a simulator of the test's own). */
const poolProvider = (id: string, model: string): string => `version: 1
id: ${id}
base_url: { env: POOL_BASE_URL, default: "https://pool.invalid/v1" }
auth: { scheme: bearer, keys: [env:${id.toUpperCase()}_KEY_1, env:${id.toUpperCase()}_KEY_2] }
timeouts: { connect_ms: 2000, headers_ms: 10000, idle_ms: 10000 }
operations:
  chat-completions: { method: POST, path: /chat/completions, format: openai-chat, answer: { type: sse } }
offerings:
  - id: ${model}
    service_type: CHAT
    availability: available
    max_output_tokens: 16384
    context_window: 128000
    billing: { unit: token, per: 1000000, prices: { input: "0.15", output: "0.60" } }
`;

describeStore('several sources for one model (issue 29)', () => {
  let t: TestGateway;
  let vendor: Simulator;

  beforeAll(async () => {
    vendor = await startSimulator();
    const copy = await copyConfig();
    // Two providers, so that a key resting in one test is not the other test's.
    await copy.write('providers/pool.yaml', poolProvider('pool', 'pool-429'));
    await copy.write('providers/pool2.yaml', poolProvider('pool2', 'pool-401'));
    const two = (a: string, b: string, extra: Record<string, unknown> = {}) => ({
      deployments: [{ provider: 'openai', upstream_model: a, ...extra }, { provider: 'openai', upstream_model: b }],
    });
    await addOpenaiOfferings(copy, [
      chatOffering('weighted', { deployments: [{ provider: 'openai', upstream_model: 'w-a', weight: 3 }, { provider: 'openai', upstream_model: 'w-b', weight: 1 }] }),
      chatOffering('least', { ...two('li-slow', 'li-fast'), routing: { strategy: 'least_inflight' } }),
      chatOffering('prio', { deployments: [{ provider: 'openai', upstream_model: 'pr-main' }, { id: 'backup', provider: 'openai', upstream_model: 'pr-backup', priority: 1 }] }),
    ]);
    t = await startTestGateway({ configFile: copy.configFile, env: {
      POOL_BASE_URL: `${vendor.url}/v1`, POOL_KEY_1: 'pool-key-1', POOL_KEY_2: 'pool-key-2', POOL2_KEY_1: 'pool2-key-1', POOL2_KEY_2: 'pool2-key-2',
    } });
  }, 60_000);
  afterAll(async () => { await t?.dispose(); await vendor?.close(); });

  async function account(): Promise<{ id: string; key: string; opening: bigint }> {
    const a = await t.account('5');
    return { ...a, opening: parseUsd('5') };
  }

  async function chat(key: string, model: string, stream = false): Promise<{ status: number; model: string; attempts: string | null; provider: string | null }> {
    const res = await request(`${t.url}/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: MESSAGES, stream }),
    });
    const text = await res.body.text();
    const served = stream ? /"model":"([^"]+)"/.exec(text)?.[1] ?? '' : res.statusCode === 200 ? (JSON.parse(text) as { model: string }).model : '';
    return { status: res.statusCode, model: served, attempts: res.headers['x-gateway-attempts'] as string ?? null, provider: res.headers['x-gateway-provider'] as string ?? null };
  }

  async function vendorFault(key: string, fault: Record<string, unknown>): Promise<void> {
    const res = await request(`${vendor.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key, fault }) });
    expect(res.statusCode).toBe(200);
    await res.body.text();
  }

  async function vendorRequests(model: string): Promise<Array<{ key: string | null }>> {
    const res = await request(`${vendor.url}/__sim/requests?model=${model}`);
    return ((await res.body.json()) as { data: Array<{ key: string | null }> }).data;
  }

  async function deployments(): Promise<Array<Record<string, any>>> {
    const res = await request(`${t.url}/admin/deployments`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.statusCode).toBe(200);
    return ((await res.body.json()) as { data: Array<Record<string, any>> }).data;
  }

  it('a key answered 429 rests until its Retry-After while the other key carries on', async () => {
    const a = await account();
    await vendorFault('pool-key-1', { status: 429, retry_after_seconds: 60 });
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await chat(a.key, 'pool-429', i % 2 === 1));
    expect(results.every((r) => r.status === 200 && r.model === 'pool-429' && r.provider === 'pool')).toBe(true);
    const seen = await vendorRequests('pool-429');
    // The first key was tried once (its 429 answered with a 60 s rest); every answer came from the second.
    expect(seen.filter((s) => s.key === 'pool-key-1')).toHaveLength(1);
    expect(seen.filter((s) => s.key === 'pool-key-2')).toHaveLength(6);
    expect((await deployments()).find((d) => d.id === 'pool/pool-429')!.keys).toEqual({ usable: 1, resting: 1, removed: 0 });
    await expectConserved(t, a.id, a.opening);
  });

  it('a key answered 401 is taken out and the request moves on; it stays out', async () => {
    const a = await account();
    await vendorFault('pool2-key-1', { status: 401 });
    for (let i = 0; i < 4; i++) expect((await chat(a.key, 'pool-401')).status).toBe(200);
    const seen = await vendorRequests('pool-401');
    expect(seen.filter((s) => s.key === 'pool2-key-1')).toHaveLength(1);
    expect(seen.filter((s) => s.key === 'pool2-key-2')).toHaveLength(4);
    const listed = (await deployments()).find((d) => d.id === 'pool2/pool-401')!;
    expect(listed.keys.removed).toBe(1);
    const metrics = await (await request(`${t.url}/metrics`)).body.text();
    expect(metrics).toMatch(/gateway_upstream_attempts_total\{provider="pool2",deployment="pool2\/pool-401",outcome="401"\} 1/);
    await expectConserved(t, a.id, a.opening);
  });

  it('weights: observed shares within a few percent over 2,000 requests', async () => {
    const a = await account();
    const queue = Array.from({ length: 2000 }, (_, i) => i);
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (queue.pop() !== undefined) expect((await chat(a.key, 'weighted')).status).toBe(200);
    }));
    const shareA = (await simRequests(t, 'w-a')).length / 2000;
    expect((await simRequests(t, 'w-a')).length + (await simRequests(t, 'w-b')).length).toBe(2000);
    expect(shareA).toBeGreaterThan(0.72);
    expect(shareA).toBeLessThan(0.78);
    const rows = await expectConserved(t, a.id, a.opening);
    expect(new Set(rows.map((r) => r.deployment))).toEqual(new Set(['openai/w-a', 'openai/w-b']));
  }, 120_000);

  it('least_inflight: a slow deployment with a request in flight gets no other', async () => {
    const a = await account();
    await t.fault({ latency_ms: 1500 }, 'li-slow');
    const pending: Array<Promise<unknown>> = [];
    for (let i = 0; i < 12; i++) {
      pending.push(chat(a.key, 'least'));
      await new Promise((r) => setTimeout(r, 80));
    }
    await Promise.all(pending);
    // Once a request sits on the slow one, every later request sees it busy and the fast one idle.
    expect((await simRequests(t, 'li-slow')).length).toBeLessThanOrEqual(2);
    expect((await simRequests(t, 'li-fast')).length).toBeGreaterThanOrEqual(10);
    await expectConserved(t, a.id, a.opening);
  });

  it('priorities: the backup serves only when the lower priority fails', async () => {
    const a = await account();
    for (let i = 0; i < 10; i++) expect((await chat(a.key, 'prio')).status).toBe(200);
    expect(await simRequests(t, 'pr-backup')).toHaveLength(0);
    await t.fault({ status: 503 }, 'pr-main');
    const r = await chat(a.key, 'prio', true);
    expect(r.status).toBe(200);
    expect(r.model).toBe('prio');
    expect(r.attempts).toBe('3');
    expect(await simRequests(t, 'pr-backup')).toHaveLength(1);
    const rows = await expectConserved(t, a.id, a.opening);
    expect(rows[0]!.deployment).toBe('backup');
    const listed = (await deployments()).find((d) => d.id === 'openai/pr-main')!;
    expect(listed).toMatchObject({ provider: 'openai', offerings: ['prio'], priority: 0, weight: 1, circuit: 'closed' });
    expect(listed.error_rate).toBeGreaterThan(0);
  });

  describe('circuits', () => {
    it('five failures open a deployment\'s circuit: listed open, reported by the metric, skipped', async () => {
      const a = await account();
      await t.fault({ status: 503 }, 'w-b');
      for (let i = 0; i < 40 && (await deployments()).find((d) => d.id === 'openai/w-b')?.circuit !== 'open'; i++) {
        expect((await chat(a.key, 'weighted')).status).toBe(200);
      }
      expect((await deployments()).find((d) => d.id === 'openai/w-b')!.circuit).toBe('open');
      const metrics = await (await request(`${t.url}/metrics`)).body.text();
      expect(metrics).toContain('gateway_deployment_circuit_state{deployment="openai/w-b"} 2');
      const before = (await simRequests(t, 'w-b')).length;
      for (let i = 0; i < 10; i++) expect((await chat(a.key, 'weighted')).model).toBe('weighted');
      expect((await simRequests(t, 'w-b')).length).toBe(before);
      await t.clearFaults();
      await expectConserved(t, a.id, a.opening);
    });
  });
});
