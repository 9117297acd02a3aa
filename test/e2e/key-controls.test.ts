/**
 * Per-key controls over real HTTP (issue 33 item 2): a key's budget under 200 concurrent requests
 * (never spent past, the account and another key of it unaffected, credit grants bypassed), its
 * allowed_models with a pattern (403 model_not_allowed in the OpenAI and Anthropic shapes, through
 * the official SDKs), its expiry by the injected clock (401), PATCH taking effect at once, and a day
 * budget starting again at UTC midnight of the injected clock.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { holdAmount } from '../../src/billing/pricing.js';
import { ManualClock } from '../../src/clock.js';
import { formatUsd } from '../../src/money.js';
import { countChatPromptTokens } from '../../src/tokenize.js';
import { describeStore } from '../helpers/db.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postChat, settled, type Account } from '../helpers/chat.js';

const MESSAGES = [{ role: 'user', content: 'key budget' }];
const MAX_TOKENS = 16;
const DAY_MS = 86_400_000;

interface KeyJson { id: string; key: string; budget_usd: string | null; budget_period: string | null; allowed_models: string[] | null; expires_at: string | null; period_start: string | null; spent_usd: string | null; held_usd: string | null }

describeStore('per-key controls', () => {
  let t: TestGateway;
  let holdNano: bigint;
  const clock = new ManualClock();
  const admin = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${t.url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as KeyJson & { error?: { code: string } } };
  };
  const account = async (balanceUsd = '5') => (await admin('POST', '/admin/accounts', { balance_usd: balanceUsd })).json as unknown as { id: string; key: string; key_id: string };
  const keyOf = async (accountId: string, body: Record<string, unknown>) => {
    const res = await admin('POST', `/admin/accounts/${accountId}/keys`, body);
    expect(res.status).toBe(201);
    return res.json;
  };
  const chat = (a: Account) => postChat(a, { model: 'gpt-4o-mini', messages: MESSAGES, max_tokens: MAX_TOKENS }).then(async (r) => ({ status: r.status, body: (await r.json()) as { error?: { code: string; type: string } } }));
  const usageOfKey = async (accountId: string, keyId: string) => {
    const page = await t.gw.runtime.ledger.listUsage(accountId, { limit: 500, keyId });
    return page.data.reduce((sum, r) => sum + r.amountNano, 0n);
  };

  beforeAll(async () => {
    t = await startTestGateway({ clock });
    const offering = t.gw.generation().gateway.offerings.get('gpt-4o-mini')!;
    holdNano = holdAmount(countChatPromptTokens(MESSAGES), MAX_TOKENS, 10n, offering);
  });
  afterAll(async () => { await t?.dispose(); });

  it('200 concurrent requests never spend past a small key budget; the balance pays only what was charged, another key is unaffected', async () => {
    const created = await account('5');
    const budgetNano = holdNano * 12n;
    const key = await keyOf(created.id, { name: 'small', budget_usd: formatUsd(budgetNano), budget_period: 'month' });
    expect(key).toMatchObject({ budget_usd: formatUsd(budgetNano), budget_period: 'month', spent_usd: '0', held_usd: '0' });
    const a: Account = { id: created.id, key: key.key, t };
    const upstreamBefore = t.sim.requests;
    const answers = await Promise.all(Array.from({ length: 200 }, () => chat(a)));
    const ok = answers.filter((r) => r.status === 200).length;
    const refused = answers.filter((r) => r.status === 402);
    expect(ok + refused.length).toBe(200);
    expect(ok).toBeGreaterThanOrEqual(12);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.body.error).toMatchObject({ code: 'key_budget_exceeded', type: 'insufficient_balance' });
    // No refused request reached the upstream.
    expect(t.sim.requests - upstreamBefore).toBe(ok);
    const after = await settled(a);
    const spent = await usageOfKey(created.id, key.id);
    expect(spent).toBeLessThanOrEqual(budgetNano);
    expect(after.balanceNano).toBe(5_000_000_000n - spent);
    const shown = await admin('GET', `/admin/keys/${key.id}`);
    expect(shown.json).toMatchObject({ spent_usd: formatUsd(spent), held_usd: '0', budget_period: 'month' });
    // The account's first key has no budget: it still spends from the balance, and none of it counts against the budgeted key.
    const other = await chat({ id: created.id, key: created.key, t });
    expect(other.status).toBe(200);
    await settled(a);
    expect((await admin('GET', `/admin/keys/${key.id}`)).json.spent_usd).toBe(formatUsd(spent));
    const line = (await t.gw.runtime.ledger.reconcile()).find((l) => l.accountId === created.id)!;
    expect(line.differenceNano).toBe(0n);
  });

  it('allowed_models with a pattern: 403 model_not_allowed in the OpenAI and Anthropic shapes, an alias checked as its offering', async () => {
    const created = await account('5');
    const key = await keyOf(created.id, { allowed_models: ['gpt-4o*', 'claude-haiku-4-5'] });
    const openai = new OpenAI({ apiKey: key.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
    const anthropic = new Anthropic({ apiKey: key.key, baseURL: t.url, maxRetries: 0 });
    await expect(openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 })).resolves.toMatchObject({ object: 'chat.completion' });
    const denied = await openai.chat.completions.create({ model: 'claude-opus-4-5', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(denied).toMatchObject({ status: 403, code: 'model_not_allowed', param: 'model', type: 'permission_error' });
    // The dated alias is its offering, claude-haiku-4-5, which the list names.
    await expect(anthropic.messages.create({ model: 'claude-haiku-4-5-20251001', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })).resolves.toMatchObject({ type: 'message' });
    const refused = await anthropic.messages.create({ model: 'claude-opus-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((refused as InstanceType<typeof Anthropic.PermissionDeniedError>).error).toMatchObject({ type: 'error', error: { type: 'permission_error', code: 'model_not_allowed' } });
    // The models list shows the key what it may use; retrieving another model is a 404.
    const listed = (await openai.models.list()).data.map((m) => m.id);
    expect(listed).toContain('gpt-4o-mini');
    expect(listed).toContain('claude-haiku-4-5');
    expect(listed).not.toContain('claude-sonnet-4-5');
    expect(listed.every((id) => id.startsWith('gpt-4o') || id.startsWith('claude-haiku-4-5'))).toBe(true);
    await expect(openai.models.retrieve('claude-opus-4-5')).rejects.toMatchObject({ status: 404 });
    // The account's other key has no list.
    expect((await chat({ id: created.id, key: created.key, t })).status).toBe(200);
    const all = (await new OpenAI({ apiKey: created.key, baseURL: `${t.url}/v1`, maxRetries: 0 }).models.list()).data.map((m) => m.id);
    expect(all).toContain('claude-sonnet-4-5');
  });

  it('an expired key is 401 by the injected clock, even while its lookup is cached', async () => {
    const created = await account('5');
    const key = await keyOf(created.id, { expires_at: new Date(clock.now().getTime() + 3_600_000).toISOString() });
    const a: Account = { id: created.id, key: key.key, t };
    expect((await chat(a)).status).toBe(200);
    clock.advance(3_600_000);
    const expired = await chat(a);
    expect(expired.status).toBe(401);
    expect(expired.body.error).toMatchObject({ code: 'invalid_api_key', type: 'authentication_error' });
    expect((await admin('GET', `/admin/keys/${key.id}`)).json).toMatchObject({ expired: true });
    expect((await admin('PATCH', `/admin/keys/${key.id}`, { expires_at: null })).status).toBe(200);
    expect((await chat(a)).status).toBe(200);
  });

  it('PATCH changes take effect on the next request: budget, models, and clearing them', async () => {
    const created = await account('5');
    const key = await keyOf(created.id, { name: 'patched' });
    const a: Account = { id: created.id, key: key.key, t };
    expect((await chat(a)).status).toBe(200);
    expect((await admin('PATCH', `/admin/keys/${key.id}`, { allowed_models: ['*-embedding-*'] })).json.allowed_models).toEqual(['*-embedding-*']);
    expect((await chat(a)).body.error?.code).toBe('model_not_allowed');
    const patched = await admin('PATCH', `/admin/keys/${key.id}`, { allowed_models: null, budget_usd: '0', budget_period: 'day' });
    expect(patched.json).toMatchObject({ allowed_models: null, budget_usd: '0', budget_period: 'day' });
    const before = await settled(a);
    const over = await chat(a);
    expect(over.status).toBe(402);
    expect(over.body.error?.code).toBe('key_budget_exceeded');
    expect((await settled(a)).balanceNano).toBe(before.balanceNano);
    expect((await admin('PATCH', `/admin/keys/${key.id}`, { budget_usd: null })).json).toMatchObject({ budget_usd: null, budget_period: null, spent_usd: null });
    expect((await chat(a)).status).toBe(200);
    // A budget without its period, and a bad time, are refused.
    expect((await admin('PATCH', `/admin/keys/${key.id}`, { budget_usd: '1' })).status).toBe(400);
    expect((await admin('PATCH', `/admin/keys/${key.id}`, { expires_at: 'tomorrow' })).status).toBe(400);
    expect((await admin('PATCH', '/admin/keys/key_nope', { budget_usd: null })).status).toBe(404);
  });

  it('a streamed answer on a budgeted key is charged into its window, and its hold freed', async () => {
    const created = await account('5');
    const key = await keyOf(created.id, { budget_usd: '1', budget_period: 'total' });
    const openai = new OpenAI({ apiKey: key.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
    const stream = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'key budget' }], max_tokens: MAX_TOKENS, stream: true, stream_options: { include_usage: true } });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text.length).toBeGreaterThan(0);
    await settled({ id: created.id, key: key.key, t });
    const spent = await usageOfKey(created.id, key.id);
    expect(spent).toBeGreaterThan(0n);
    expect((await admin('GET', `/admin/keys/${key.id}`)).json).toMatchObject({ spent_usd: formatUsd(spent), held_usd: '0', period_start: '1970-01-01T00:00:00.000Z' });
  });

  it('a day budget starts again at the next UTC midnight of the injected clock', async () => {
    const created = await account('5');
    const key = await keyOf(created.id, { budget_usd: formatUsd(holdNano), budget_period: 'day' });
    const a: Account = { id: created.id, key: key.key, t };
    expect((await chat(a)).status).toBe(200);
    await settled(a);
    expect((await chat(a)).status).toBe(402);
    const today = (await admin('GET', `/admin/keys/${key.id}`)).json;
    expect(today.period_start).toBe(new Date(Math.floor(clock.now().getTime() / DAY_MS) * DAY_MS).toISOString());
    clock.advance(DAY_MS);
    const tomorrow = (await admin('GET', `/admin/keys/${key.id}`)).json;
    expect(tomorrow).toMatchObject({ spent_usd: '0', period_start: new Date(Date.parse(today.period_start!) + DAY_MS).toISOString() });
    expect((await chat(a)).status).toBe(200);
  });
});
