/**
 * The key page (issue 13 item 2; spec 5.4) over real HTTP: a named key is shown once, listed by name
 * and prefix with its creation, last billed use and this month's spend (exact), rotated under the same
 * name with the old key refused at once, and revoked.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageIdFloor, monthStart } from '../../src/console/account-data.js';
import { usd } from '../../src/console/html.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { ConsoleClient, csrfOf, signUp } from '../helpers/console.js';

/** The key a page shows once. */
const shownKey = (html: string): string => /id="new-key">([^<]+)</.exec(html)?.[1] ?? '';

describe('console key page', () => {
  let t: TestGateway;
  let client: ConsoleClient;
  let accountId: string;

  beforeAll(async () => {
    t = await startTestGateway();
    client = new ConsoleClient(t.url);
    await signUp(client, 'keys@example.com');
    [{ account_id: accountId }] = await t.gw.db.query<{ account_id: string }>("SELECT account_id FROM console_users WHERE email = 'keys@example.com'") as [{ account_id: string }];
    await t.gw.runtime.ledger.topUp(accountId, 5_000_000_000n);
  }, 60_000);
  afterAll(async () => { await t?.dispose(); });

  const chat = (key: string): Promise<unknown> =>
    new OpenAI({ baseURL: `${t.url}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });

  it('creates a named key, shows it once, and lists it by name and prefix', async () => {
    const page = await client.get('/console/keys');
    const created = await client.post('/console/keys', { name: 'laptop' }, csrfOf(page.text));
    expect(created.status).toBe(200);
    const key = shownKey(created.text);
    expect(key).toMatch(/^gw-[A-Za-z0-9_-]{43}$/);
    expect(created.text).toContain('shown only once');
    const listed = await client.get('/console/keys');
    expect(listed.text).not.toContain(key);
    expect(listed.text).toContain('laptop');
    expect(listed.text).toContain(`<code>${key.slice(0, 7)}…</code>`);
    await expect(chat(key)).resolves.toBeTruthy();
  });

  it('shows the last billed use and this month\'s spend of each key, exactly', async () => {
    const [row] = await t.gw.db.query<{ key_id: string; amount: string; created_at: Date }>(
      'SELECT key_id, sum(amount_nano)::text AS amount, max(created_at) AS created_at FROM usage_rows WHERE account_id = $1 GROUP BY key_id', [accountId],
    );
    const listed = await client.get('/console/keys');
    const line = new RegExp(`<tr data-key-id="${row!.key_id}">(.*?)</tr>`).exec(listed.text)![1]!;
    expect(line).toContain(`<td class="num">${usd(BigInt(row!.amount))}</td>`);
    expect(line).toContain(new Date(row!.created_at).toISOString().slice(0, 16).replace('T', ' '));
    expect(BigInt(row!.amount)).toBeGreaterThan(0n);
  });

  it('counts this calendar month only (UTC), by usage row id', () => {
    const now = new Date(Date.UTC(2026, 10, 24, 13, 0));
    expect(monthStart(now).toISOString()).toBe('2026-11-01T00:00:00.000Z');
    expect(usageIdFloor(monthStart(now))).toBe(`use_${Date.UTC(2026, 10, 1).toString(16).padStart(12, '0')}`);
  });

  it('rotates a key under the same name: the old key is refused at once, the new one works', async () => {
    const page = await client.get('/console/keys');
    const old = shownKey((await client.post('/console/keys', { name: 'ci' }, csrfOf(page.text))).text);
    await expect(chat(old)).resolves.toBeTruthy();
    const [{ id }] = await t.gw.db.query<{ id: string }>("SELECT id FROM api_keys WHERE account_id = $1 AND name = 'ci' AND revoked_at IS NULL", [accountId]) as [{ id: string }];
    const rotated = await client.post(`/console/keys/${id}/rotate`, {}, csrfOf((await client.get('/console/keys')).text));
    expect(rotated.status).toBe(200);
    const fresh = shownKey(rotated.text);
    expect(fresh).not.toBe(old);
    expect(rotated.text).toContain('“ci”');
    await expect(chat(old)).rejects.toMatchObject({ status: 401 });
    await expect(chat(fresh)).resolves.toBeTruthy();
    const names = await t.gw.db.query<{ name: string; revoked: boolean }>('SELECT name, revoked_at IS NOT NULL AS revoked FROM api_keys WHERE account_id = $1 AND name = $2 ORDER BY created_at', [accountId, 'ci']);
    expect(names.map((n) => n.revoked)).toEqual([true, false]);
  });

  it('revokes a key: refused at once, listed as revoked; a rotated or unknown key id is a 404', async () => {
    const [{ id }] = await t.gw.db.query<{ id: string }>("SELECT id FROM api_keys WHERE account_id = $1 AND name = 'laptop'", [accountId]) as [{ id: string }];
    const revoked = await client.post(`/console/keys/${id}/revoke`, {}, csrfOf((await client.get('/console/keys')).text));
    expect(revoked.status).toBe(303);
    const after = await client.get(revoked.headers.location as string);
    expect(after.text).toContain('The key was revoked.');
    expect(new RegExp(`<tr data-key-id="${id}">.*?Revoked`).test(after.text)).toBe(true);
    const [{ id: rotatedAway }] = await t.gw.db.query<{ id: string }>("SELECT id FROM api_keys WHERE account_id = $1 AND name = 'ci' AND revoked_at IS NOT NULL", [accountId]) as [{ id: string }];
    expect((await client.post(`/console/keys/${rotatedAway}/rotate`, {}, csrfOf(after.text))).status).toBe(404);
    expect((await client.post('/console/keys/key_unknown/rotate', {}, csrfOf(after.text))).status).toBe(404);
  });

  it("sets a key's controls on its page: they apply from the next request, and the page shows what the key spent in its period (issue 33 item 2)", async () => {
    const made = await client.post('/console/keys', { name: 'budgeted' }, csrfOf((await client.get('/console/keys')).text));
    const key = shownKey(made.text);
    const [{ id }] = await t.gw.db.query<{ id: string }>("SELECT id FROM api_keys WHERE account_id = $1 AND name = 'budgeted'", [accountId]) as [{ id: string }];
    expect(made.text).toContain(`href="/console/keys/${id}"`);
    const settings = await client.get(`/console/keys/${id}`);
    expect(settings.status).toBe(200);
    expect(settings.text).toContain('This key has no budget');
    const saved = await client.post(`/console/keys/${id}/controls`, { budget: '1', period: 'month', models: 'gpt-4o*', expires: '' }, csrfOf(settings.text));
    expect(saved.status).toBe(303);
    expect(saved.headers.location).toBe(`/console/keys/${id}?done=saved`);
    await expect(chat(key)).resolves.toBeTruthy();
    const refused = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: 'claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }], max_tokens: 8 });
    await expect(refused).rejects.toMatchObject({ status: 403, code: 'model_not_allowed' });
    const [{ spent }] = await t.gw.db.query<{ spent: string }>('SELECT sum(amount_nano)::text AS spent FROM usage_rows WHERE key_id = $1', [id]) as [{ spent: string }];
    const shown = await client.get(`/console/keys/${id}?done=saved`);
    expect(shown.text).toContain('The controls were saved');
    expect(shown.text).toContain(`<dd data-figure="spent">${usd(BigInt(spent))}</dd>`);
    expect(shown.text).toContain(`<dd data-figure="left">${usd(1_000_000_000n - BigInt(spent))}</dd>`);
    expect(shown.text).toContain('value="gpt-4o*"');
    // A zero budget refuses at once; empty fields clear every control.
    await client.post(`/console/keys/${id}/controls`, { budget: '0', period: 'day', models: '', expires: '' }, csrfOf(shown.text));
    await expect(chat(key)).rejects.toMatchObject({ status: 402, code: 'key_budget_exceeded' });
    await client.post(`/console/keys/${id}/controls`, { budget: '', period: '', models: '', expires: '2020-01-01T00:00' }, csrfOf(shown.text));
    await expect(chat(key)).rejects.toMatchObject({ status: 401 });
    await client.post(`/console/keys/${id}/controls`, { budget: '', period: '', models: '', expires: '' }, csrfOf(shown.text));
    await expect(chat(key)).resolves.toBeTruthy();
    // A budget without its period, a bad amount, and another account's (or an unknown) key are refused.
    expect((await client.post(`/console/keys/${id}/controls`, { budget: '2', period: '' }, csrfOf(shown.text))).status).toBe(400);
    expect((await client.post(`/console/keys/${id}/controls`, { budget: 'lots', period: 'day' }, csrfOf(shown.text))).status).toBe(400);
    expect((await client.post('/console/keys/key_unknown/controls', { budget: '' }, csrfOf(shown.text))).status).toBe(404);
    expect((await client.get('/console/keys/key_unknown')).status).toBe(404);
    const other = await t.gw.runtime.ledger.createAccount({});
    const foreign = await t.gw.runtime.ledger.createKey(other.id);
    expect((await client.get(`/console/keys/${foreign.id}`)).status).toBe(404);
    expect((await client.post(`/console/keys/${foreign.id}/controls`, { budget: '' }, csrfOf(shown.text))).status).toBe(404);
  });

  it('refuses a key without a name, or with a name too long', async () => {
    const csrf = csrfOf((await client.get('/console/keys')).text);
    expect((await client.post('/console/keys', { name: '  ' }, csrf)).status).toBe(400);
    expect((await client.post('/console/keys', { name: 'x'.repeat(65) }, csrf)).status).toBe(400);
  });
});
