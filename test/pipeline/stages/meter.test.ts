/**
 * The meter stage reports what was billed through the meter (issue 9 point 1: the stage names no unit):
 * a token meter reports its tokens by kind and the charge, a quantity meter the charge only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';

/** The value of one sample line of GET /metrics, or null when absent. */
async function sample(t: TestGateway, name: string, labels: string): Promise<string | null> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line ? line.slice(line.lastIndexOf(' ') + 1) : null;
}

function post(t: TestGateway, path: string, key: string, body: unknown): Promise<Response> {
  return fetch(`${t.url}${path}`, { method: 'POST', body: JSON.stringify(body), headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
}

describe('meter stage metrics', () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });

  it('a token meter reports its tokens and the charge', async () => {
    const account = await t.account('5');
    const res = await post(t, '/v1/chat/completions', account.key, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'count me' }] });
    const usage = ((await res.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
    const labels = (kind: string) => `provider="openai",model="gpt-4o-mini",kind="${kind}"`;
    expect(await sample(t, 'gateway_tokens_metered_total', labels('input'))).toBe(String(usage.prompt_tokens));
    expect(await sample(t, 'gateway_tokens_metered_total', labels('output'))).toBe(String(usage.completion_tokens));
    const charged = (await t.usage(account.id)).data.reduce((sum, r) => sum + r.amountNano, 0n);
    expect(await sample(t, 'gateway_cost_metered_nano_usd_total', 'provider="openai",model="gpt-4o-mini"')).toBe(charged.toString());
  });

  it('a quantity meter reports the charge and no tokens', async () => {
    const account = await t.account('5');
    const res = await post(t, '/v1/rerank', account.key, { model: 'rerank-pro', query: 'capital of France', documents: ['Paris.', 'Berlin.'] });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    expect(await sample(t, 'gateway_cost_metered_nano_usd_total', 'provider="cohere",model="rerank-pro"')).toBe('2000000');
    expect(await sample(t, 'gateway_tokens_metered_total', 'provider="cohere",model="rerank-pro",kind="input"')).toBeNull();
  });
});
