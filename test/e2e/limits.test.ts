/**
 * Rate limits over real HTTP (issue 4): admin overrides per account and per key, 429 with
 * Retry-After and retry-after-ms in the client's format, never billed, and a 400 for a request that
 * could never fit the token limit.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { postChat, settled, type Account } from '../helpers/chat.js';

describeStore('rate limits', () => {
  let t: TestGateway;
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${t.url}${path}`, { method, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });

  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });

  async function account(limits: Record<string, number | null>): Promise<Account> {
    const res = await admin('POST', '/admin/accounts', { balance_usd: '5' });
    const created = (await res.json()) as { id: string; key: string };
    expect((await admin('PATCH', `/admin/accounts/${created.id}`, { limits })).status).toBe(200);
    return { id: created.id, key: created.key, t };
  }

  it('answers 429 with retry-after past the account request limit, in the client format, unbilled', async () => {
    const a = await account({ requests_per_minute: 2 });
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'limit me' }] };
    expect((await postChat(a, body)).status).toBe(200);
    expect((await postChat(a, body)).status).toBe(200);
    const before = await settled(a);
    const upstream = t.sim.requests;
    const refused = await postChat(a, body);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(refused.headers.get('retry-after-ms'))).toBeGreaterThan(0);
    expect(await refused.json()).toMatchObject({ error: { code: 'rate_limited', type: 'rate_limit_error' } });
    const messages = await fetch(`${t.url}/v1/messages`, {
      method: 'POST', headers: { 'x-api-key': a.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(messages.status).toBe(429);
    expect(await messages.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', code: 'rate_limited' } });
    expect(t.sim.requests).toBe(upstream);
    const after = await settled(a);
    expect(after.balanceNano).toBe(before.balanceNano);
    expect(after.rows).toBe(before.rows);
  });

  it('limits one key on top of its account, and clears an override with null', async () => {
    const a = await account({ requests_per_minute: null });
    const keyRes = await admin('POST', `/admin/accounts/${a.id}/keys`);
    const second = (await keyRes.json()) as { id: string; key: string };
    expect((await admin('PATCH', `/admin/keys/${second.id}`, { limits: { requests_per_minute: 1 } })).status).toBe(200);
    const limited: Account = { ...a, key: second.key };
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'key limit' }] };
    expect((await postChat(limited, body)).status).toBe(200);
    expect((await postChat(limited, body)).status).toBe(429);
    expect((await postChat(a, body)).status).toBe(200);
    expect((await admin('PATCH', `/admin/keys/${second.id}`, { limits: null })).status).toBe(200);
    expect((await postChat(limited, body)).status).toBe(200);
  });

  it('holds concurrency slots for requests in flight', async () => {
    const a = await account({ concurrent_requests: 1 });
    await t.fault({ latency_ms: 400, times: 1 });
    const slow = postChat(a, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'slow' }] });
    await new Promise((r) => setTimeout(r, 100));
    const second = await postChat(a, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'second' }] });
    expect(second.status).toBe(429);
    expect((await slow).status).toBe(200);
    expect((await postChat(a, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'third' }] })).status).toBe(200);
  });

  it('refuses with 400 a request that could never fit the token limit, naming its input as the param', async () => {
    const a = await account({ tokens_per_minute: 50 });
    const res = await postChat(a, { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'word '.repeat(200) }] });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'invalid_request', param: 'messages', message: expect.stringMatching(/can never be admitted\. Shorten `messages`\.$/) } });
    const responses = await fetch(`${t.url}/v1/responses`, {
      method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', input: 'word '.repeat(200) }),
    });
    expect(responses.status).toBe(400);
    expect(await responses.json()).toMatchObject({ error: { code: 'invalid_request', param: 'input' } });
  });

  it('names the route\'s own input in that 400 where it is not `messages` (embeddings: `input`)', async () => {
    const a = await account({ tokens_per_minute: 50 });
    const res = await fetch(`${t.url}/v1/embeddings`, {
      method: 'POST', headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'text-embedding-3-small', input: 'word '.repeat(200) }),
    });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as { error: { code: string; message: string; param?: string | null } };
    expect(error).toMatchObject({ code: 'invalid_request', param: 'input', message: expect.stringMatching(/can never be admitted\. Shorten `input`\.$/) });
  });

  it('rejects invalid limit bodies and unknown ids', async () => {
    expect((await admin('PATCH', '/admin/accounts/acct_nope', { limits: { requests_per_minute: 5 } })).status).toBe(404);
    const a = await account({ requests_per_minute: 5 });
    expect((await admin('PATCH', `/admin/accounts/${a.id}`, { limits: { requests_per_minute: 0 } })).status).toBe(400);
    expect((await admin('PATCH', `/admin/accounts/${a.id}`, { limits: { rpm: 5 } })).status).toBe(400);
    expect((await admin('PATCH', `/admin/accounts/${a.id}`, {})).status).toBe(400);
  });
});
