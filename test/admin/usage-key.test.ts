/**
 * Usage rows per key, end to end (issue 8): two keys of one account make real requests through the
 * gateway; the admin API (over HTTP, admin token) and the CLI list each key's rows by the key id the
 * keys API returned, with pagination, refunds and a rotated key.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run.js';
import { describeStore } from '../helpers/db.js';
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from '../helpers/gateway.js';

interface UsageJson { id: string; key_id: string | null; request_id: string; kind: string; refund_of: string | null; }

describeStore('usage rows carry key_id', () => {
  let t: TestGateway;
  beforeAll(async () => {
    t = await startTestGateway();
  });
  afterAll(async () => { await t?.dispose(); });

  const admin = async (method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> => {
    const res = await fetch(`${t.url}${path}`, {
      method, body: body === undefined ? undefined : JSON.stringify(body),
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  };

  /** One billed request with `key`; returns its x-request-id (the request_id of its rows). */
  const spend = async (key: string, path: '/v1/chat/completions' | '/v1/responses', body: Record<string, unknown>): Promise<string> => {
    const res = await fetch(`${t.url}${path}`, {
      method: 'POST', body: JSON.stringify(body), headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    await res.text();
    return res.headers.get('x-request-id')!;
  };
  const chat = (key: string, stream = false) =>
    spend(key, '/v1/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream });

  /** Every row of GET /admin/accounts/{id}/usage with this query, following `next` page by page. */
  const listAll = async (accountId: string, query: Record<string, string>): Promise<{ rows: UsageJson[]; pages: number }> => {
    const rows: UsageJson[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const qs = new URLSearchParams({ ...query, ...(after ? { after } : {}) });
      const res = await admin('GET', `/admin/accounts/${accountId}/usage?${qs}`);
      expect(res.status).toBe(200);
      rows.push(...res.json.data);
      after = res.json.next;
      pages++;
    } while (after);
    return { rows, pages };
  };

  /** Waits until no hold of the account is open (every request settled and posted; grants are not a request's hold). */
  const settled = async (accountId: string): Promise<void> => {
    for (let i = 0; i < 100; i++) {
      if ((await t.settled(accountId)).openHolds === 0) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('a hold stayed open');
  };

  it('each key lists only its own rows, by the id the keys API returned, across pages', async () => {
    const created = await admin('POST', '/admin/accounts', { balance_usd: '5' });
    expect(created.status).toBe(201);
    const { id: accountId, key: keyA, key_id: keyAId } = created.json as { id: string; key: string; key_id: string };
    const second = await admin('POST', `/admin/accounts/${accountId}/keys`);
    expect(second.status).toBe(201);
    const { id: keyBId, key: keyB } = second.json as { id: string; key: string };
    expect(keyBId).not.toBe(keyAId);

    // Key A: a chat, a streamed chat, and a response with two web searches (a token row + two call rows).
    const requestsA = [await chat(keyA), await chat(keyA, true)];
    requestsA.push(await spend(keyA, '/v1/responses', { model: 'gpt-4o', input: 'Please search twice for gateways', tools: [{ type: 'web_search' }] }));
    // Key B: three chats, interleaved with A's, so neither key's rows are one contiguous range of ids.
    const requestsB = [await chat(keyB), await chat(keyB, true)];
    requestsA.push(await chat(keyA));
    requestsB.push(await chat(keyB));
    await settled(accountId);

    const all = await listAll(accountId, {});
    expect(all.rows).toHaveLength(9);
    expect(all.rows.every((r) => r.key_id === keyAId || r.key_id === keyBId)).toBe(true);

    const ofA = await listAll(accountId, { key_id: keyAId, limit: '2' });
    expect(ofA.rows.map((r) => r.key_id)).toEqual(Array(6).fill(keyAId));
    expect(ofA.pages).toBe(3);
    expect(new Set(ofA.rows.map((r) => r.request_id))).toEqual(new Set(requestsA));
    expect(ofA.rows.filter((r) => r.kind === 'web_search')).toHaveLength(2);
    // The filtered listing is the unfiltered one restricted to the key, in the same (newest first) order.
    expect(ofA.rows.map((r) => r.id)).toEqual(all.rows.filter((r) => r.key_id === keyAId).map((r) => r.id));

    const ofB = await listAll(accountId, { key_id: keyBId, limit: '2' });
    expect(ofB.rows.map((r) => r.key_id)).toEqual(Array(3).fill(keyBId));
    expect(ofB.pages).toBe(2);
    expect(new Set(ofB.rows.map((r) => r.request_id))).toEqual(new Set(requestsB));

    // A refund keeps the key of the row it refunds.
    const refunded = ofB.rows[0]!;
    const refund = await admin('POST', `/admin/usage/${refunded.id}/refund`);
    expect(refund.status).toBe(201);
    expect(refund.json).toMatchObject({ key_id: keyBId, refund_of: refunded.id });
    expect((await listAll(accountId, { key_id: keyBId })).rows.map((r) => r.id)).toEqual([refund.json.id, ...ofB.rows.map((r) => r.id)]);
    expect((await listAll(accountId, { key_id: keyAId })).rows).toHaveLength(6);

    // A rotated key is a new key id; the old id keeps naming the rows it spent.
    const rotated = await admin('POST', `/admin/keys/${keyBId}/rotate`);
    expect(rotated.status).toBe(200);
    const afterRotation = await chat(rotated.json.key);
    await settled(accountId);
    expect((await listAll(accountId, { key_id: rotated.json.id })).rows.map((r) => [r.request_id, r.key_id])).toEqual([[afterRotation, rotated.json.id]]);
    expect((await listAll(accountId, { key_id: keyBId })).rows).toHaveLength(4);

    // Another account's key, or an unknown one, lists nothing; the account must exist.
    const other = await admin('POST', '/admin/accounts', { balance_usd: '1' });
    expect((await admin('GET', `/admin/accounts/${other.json.id}/usage?key_id=${keyAId}`)).json).toEqual({ data: [], next: null });
    expect((await admin('GET', `/admin/accounts/${accountId}/usage?key_id=key_nope`)).json).toEqual({ data: [], next: null });
    expect((await admin('GET', `/admin/accounts/acct_nope/usage?key_id=${keyAId}`)).status).toBe(404);
    expect((await admin('GET', `/admin/accounts/${accountId}/usage?key_id=`)).json).toMatchObject({ error: { code: 'invalid_request' } });

    // The CLI: `gateway usage ACCOUNT_ID --key KEY_ID`, one page and --all.
    const cli = async (argv: string[]) => {
      let out = '';
      const code = await runCli(argv, { GATEWAY_URL: t.url, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN }, { out: (s) => void (out += s), err: () => undefined });
      return { code, out };
    };
    const page = await cli(['usage', accountId, '--key', keyAId, '--limit', '4']);
    expect(page.code).toBe(0);
    expect(page.out).toContain('KEY_ID');
    expect(page.out).not.toContain(keyBId);
    expect(page.out).toContain(`--key ${keyAId} --after ${ofA.rows[3]!.id}`);
    const json = await cli(['usage', accountId, '--key', keyAId, '--limit=4', '--all', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out).data.map((r: UsageJson) => r.id)).toEqual(ofA.rows.map((r) => r.id));
  });
});
