/**
 * The official Anthropic SDKs against the gateway's messages routes (spec 4.4): the current major
 * (sends Bearer) and a 0.x release (sends x-api-key), side by side. Billing of cache tokens is exact;
 * count_tokens is free.
 */
import Anthropic from '@anthropic-ai/sdk';
import AnthropicV0 from 'anthropic-sdk-v0';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { settled, type Account } from '../helpers/chat.js';

// claude-sonnet-4-5 in providers/anthropic.yaml: 3 in / 15 out / 0.30 cache read / 3.75 cache write USD per 1M.
function sonnetPrice(u: { input_tokens: number; output_tokens: number; cache_creation_input_tokens?: number | null; cache_read_input_tokens?: number | null }): bigint {
  const exact = BigInt(u.input_tokens) * 3_000_000_000n + BigInt(u.output_tokens) * 15_000_000_000n
    + BigInt(u.cache_read_input_tokens ?? 0) * 300_000_000n + BigInt(u.cache_creation_input_tokens ?? 0) * 3_750_000_000n;
  return (exact + 500_000n) / 1_000_000n;
}

type AnyClient = Pick<Anthropic, 'messages'>;

describeStore('Anthropic SDKs against the gateway', () => {
  let t: TestGateway;
  let a: Account;
  const clients: Array<[string, () => AnyClient]> = [];

  beforeAll(async () => {
    t = await startTestGateway();
    a = { ...(await t.account('5')), t };
    clients.push(['current SDK (Bearer)', () => new Anthropic({ baseURL: t.url, apiKey: a.key, maxRetries: 0 })]);
    clients.push(['0.x SDK (x-api-key)', () => new AnthropicV0({ baseURL: t.url, apiKey: a.key, maxRetries: 0 }) as unknown as AnyClient]);
  });
  afterAll(async () => { await t?.dispose(); });

  it('creates messages with both SDKs and bills reported usage exactly', async () => {
    for (const [name, make] of clients) {
      const before = await settled(a);
      const message = await make().messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hello Claude' }] });
      expect(message.type, name).toBe('message');
      expect(message.model).toBe('claude-sonnet-4-5');
      expect(message.content[0]).toMatchObject({ type: 'text' });
      const after = await settled(a);
      expect(before.balanceNano - after.balanceNano, name).toBe(sonnetPrice(message.usage));
      expect(after.last?.details).toMatchObject({ input: message.usage.input_tokens, output: message.usage.output_tokens });
    }
    const last = await fetch(`${t.sim.url}/__sim/last`).then((r) => r.json() as Promise<{ path: string; headers: Record<string, string>; body: { model: string } }>);
    expect(last.path).toBe('/v1/messages');
    expect(last.body.model).toBe('claude-sonnet-4-5-20250929');
    expect(last.headers['anthropic-version']).toBe('2023-06-01');
    expect(last.headers['x-api-key']).toBeUndefined();
  });

  it('streams with messages.stream().finalMessage() and bills it like the JSON answer', async () => {
    const params = { model: 'claude-sonnet-4-5', max_tokens: 48, messages: [{ role: 'user' as const, content: 'Stream to me' }] };
    for (const [name, make] of clients) {
      const json = await make().messages.create(params);
      const before = await settled(a);
      const final = await make().messages.stream(params).finalMessage();
      expect(final.content, name).toEqual(json.content);
      expect(final.usage.output_tokens).toBe(json.usage.output_tokens);
      const after = await settled(a);
      expect(before.balanceNano - after.balanceNano, name).toBe(sonnetPrice(json.usage));
    }
  });

  it('prices cache writes and cache reads at their own rates', async () => {
    const system = [{ type: 'text' as const, text: `You are a cached assistant. ${'Context. '.repeat(50)}`, cache_control: { type: 'ephemeral' as const } }];
    const client = clients[0]![1]();
    const first = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 16, system, messages: [{ role: 'user', content: 'one' }] });
    const before = await settled(a);
    const second = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 16, system, messages: [{ role: 'user', content: 'one' }] });
    const after = await settled(a);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(second.usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(before.balanceNano - after.balanceNano).toBe(sonnetPrice(second.usage));
    const u = second.usage;
    expect(after.last?.details).toMatchObject({
      input: u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0),
      cached: u.cache_read_input_tokens, cache_write: u.cache_creation_input_tokens ?? 0,
    });
  });

  it('counts tokens for free, and refuses a file reference it cannot resolve', async () => {
    for (const [name, make] of clients) {
      const before = await settled(a);
      const count = await make().messages.countTokens({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'How many tokens?' }] });
      expect(count.input_tokens, name).toBeGreaterThan(0);
      const after = await settled(a);
      expect(after.balanceNano).toBe(before.balanceNano);
      expect(after.rows).toBe(before.rows);
    }
    const res = await fetch(`${t.url}/v1/messages/count_tokens`, {
      method: 'POST', headers: { 'x-api-key': a.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: 'file_gw_abc' } }] }] }),
    });
    // An id this account does not own is a 404 (an owned one is file_token_count_unsupported: message-file-refs.test.ts).
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ type: 'error', error: { type: 'not_found_error', code: 'file_not_found', message: expect.any(String) } });
  });

  it('answers errors in the messages shape: wrong-format model, missing version header, bad key', async () => {
    const client = clients[0]![1]();
    const wrong = await client.messages.create({ model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e) as { status: number; error: { type: string; error: { type: string; message: string } } };
    expect(wrong.status).toBe(400);
    expect(wrong.error.error.type).toBe('invalid_request_error');
    expect(wrong.error.error.message).toMatch(/not served by \/v1\/messages\. Use \/v1\/chat\/completions or \/v1\/responses instead\./);
    const headers = { 'x-api-key': a.key, 'content-type': 'application/json' };
    const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] });
    const missing = await fetch(`${t.url}/v1/messages`, { method: 'POST', headers, body });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringMatching(/anthropic-version header is required/) } });
    const alias = await fetch(`${t.url}/v1/messages`, { method: 'POST', headers: { ...headers, 'compat-version': '2023-06-01' }, body });
    expect(alias.status).toBe(200);
    await alias.arrayBuffer();
    const bad = await new Anthropic({ baseURL: t.url, apiKey: 'gw-wrong', maxRetries: 0 }).messages.create({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((bad as { error: unknown }).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
  });
});
