/**
 * Skills (issue 10 item 4, spec 4.6): GET /v1/skills; an execution through /v1/messages with every
 * rule of the 4.6 table refused on its own before anything is claimed or reserved; outputs published
 * as downloadable file_gw_ files after billing (the .pptx labelled ZIP served as a presentation); the
 * operation id single-use forever (in sequence and concurrently); one pending execution per account;
 * five completed per rolling 24 hours; the recovery state.
 */
import Anthropic from '@anthropic-ai/sdk';
import AnthropicV0 from 'anthropic-sdk-v0';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { parseUsd } from '../../src/money.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched } from '../helpers/native.js';

const TOOLS = [
  { type: 'code_execution_20260120', name: 'code_execution' },
  { type: 'web_fetch_20260209', name: 'web_fetch', max_uses: 3, max_content_tokens: 4096, allowed_domains: ['example.com'] },
];
const execution = (skills: string[], extra: Record<string, unknown> = {}) => ({
  model: 'claude-sonnet-4-5', max_tokens: 1024, stream: false,
  container: { skills: skills.map((skill_id) => ({ type: 'anthropic', skill_id, version: 'latest' })) },
  tools: TOOLS, messages: [{ role: 'user', content: 'Make the files.' }], ...extra,
});
let counter = 0;
const freshId = (): string => `op-${Date.now()}-${counter++}`;

describe('skills', () => {
  let t: TestGateway;
  const clock = new ManualClock();
  beforeAll(async () => { t = await startTestGateway({ clock }); });
  afterAll(async () => { await t?.dispose(); });

  async function run(key: string, body: unknown, headers: Record<string, string | null> = {}): Promise<{ status: number; json: any; headers: Headers }> {
    const all: Record<string, string> = { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'x-gateway-operation-id': freshId() };
    for (const [name, value] of Object.entries(headers)) { if (value === null) delete all[name]; else all[name] = value; }
    const res = await fetch(`${t.url}/v1/messages`, { method: 'POST', headers: all, body: JSON.stringify(body) });
    return { status: res.status, json: await res.json(), headers: res.headers };
  }

  it('lists the four built-in skills, filtered by source', async () => {
    const account = await t.account('0');
    const get = async (q: string) => (await (await fetch(`${t.url}/v1/skills${q}`, { headers: { 'x-api-key': account.key, 'anthropic-version': '2023-06-01' } })).json()) as { data: Array<{ id: string }> };
    expect((await get('')).data.map((s) => s.id)).toEqual(['xlsx', 'pptx', 'pdf', 'docx']);
    expect((await get('?source=anthropic')).data).toHaveLength(4);
    expect((await get('?source=custom')).data).toEqual([]);
  });

  it('runs an execution: billed tokens, container_gw_ id, outputs published as downloadable file_gw_ files', async () => {
    // Spending on credit: after the execution the balance is below zero, and downloads still work.
    const account = await t.account('0', '5');
    const answer = await run(account.key, execution(['pptx', 'xlsx']));
    expect(answer.status, JSON.stringify(answer.json)).toBe(200);
    expect(answer.json.container.id).toMatch(/^container_gw_[0-9a-f]{24}$/);
    const ids = JSON.stringify(answer.json.content).match(/file_gw_[0-9a-f]{24}/g) ?? [];
    expect(new Set(ids).size).toBe(2);
    expect(JSON.stringify(answer.json)).not.toMatch(/"file_id":"file_(?!gw_)/);
    const types = [];
    for (const id of new Set(ids)) {
      const res = await fetch(`${t.url}/v1/files/${id}/content`, { headers: { 'x-api-key': account.key, 'anthropic-version': '2023-06-01' } });
      expect(res.status).toBe(200);
      types.push(res.headers.get('content-type'));
      expect(Buffer.from(await res.arrayBuffer()).subarray(0, 2).toString()).toBe('PK');
    }
    expect(types.sort()).toEqual(['application/vnd.openxmlformats-officedocument.presentationml.presentation', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet']);
    const usage = (await t.usage(account.id)).data;
    expect(usage.map((r) => r.kind)).toEqual(['tokens']);
    // Generated files are downloadable with nothing left to spend, and count in the account's files.
    expect((await t.settled(account.id))!.balanceNano < 0n).toBe(true);
    const list = await (await fetch(`${t.url}/v1/files`, { headers: { 'x-api-key': account.key, 'anthropic-version': '2023-06-01' } })).json() as { data: Array<{ downloadable: boolean }> };
    expect(list.data.map((f) => f.downloadable)).toEqual([true, true]);
    // The official SDKs download them too.
    const sdkDownload = await new Anthropic({ apiKey: account.key, baseURL: t.url, maxRetries: 0 }).files.download(ids[0]!);
    expect(Buffer.from(await sdkDownload.arrayBuffer()).subarray(0, 2).toString()).toBe('PK');
    const v0Download = await new AnthropicV0({ apiKey: account.key, baseURL: t.url, maxRetries: 0 }).beta.files.download(ids[1]!);
    expect(v0Download.status).toBe(200);
  });

  it('refuses every rule of the 4.6 table on its own, before anything is reserved', async () => {
    const account = await t.account('5');
    const web = TOOLS[1]!;
    const cases: Array<[string, unknown, Record<string, string | null>, string]> = [
      ['no operation id', execution(['xlsx']), { 'x-gateway-operation-id': null }, 'operation_id_required'],
      ['streaming', execution(['xlsx'], { stream: true }), {}, 'invalid_request'],
      ['max_tokens over 1024', execution(['xlsx'], { max_tokens: 1025 }), {}, 'invalid_request'],
      ['container reuse', execution(['xlsx'], { container: { id: 'container_x', skills: [{ type: 'anthropic', skill_id: 'xlsx', version: 'latest' }] } }), {}, 'invalid_request'],
      ['custom skill', execution(['xlsx'], { container: { skills: [{ type: 'custom', skill_id: 'skill_01', version: 'latest' }] } }), {}, 'invalid_request'],
      ['unknown skill', execution(['gif']), {}, 'invalid_request'],
      ['skill the model does not support', execution(['pptx'], { model: 'claude-haiku-4-5' }), {}, 'invalid_request'],
      ['no web fetch tool', execution(['xlsx'], { tools: [TOOLS[0]] }), {}, 'invalid_request'],
      ['no code execution tool', execution(['xlsx'], { tools: [web] }), {}, 'invalid_request'],
      ['web fetch max_uses 4', execution(['xlsx'], { tools: [TOOLS[0], { ...web, max_uses: 4 }] }), {}, 'invalid_request'],
      ['web fetch 4097 content tokens', execution(['xlsx'], { tools: [TOOLS[0], { ...web, max_content_tokens: 4097 }] }), {}, 'invalid_request'],
      ['a client tool', execution(['xlsx'], { tools: [...TOOLS, { name: 'mine', input_schema: { type: 'object' } }] }), {}, 'invalid_request'],
      ['a beta header', execution(['xlsx']), { 'anthropic-beta': 'skills-2025-10-02' }, 'invalid_request'],
      ['another version header', execution(['xlsx']), { 'anthropic-version': '2026-10-21' }, 'invalid_request'],
      ['standalone code execution', { ...execution(['xlsx']), container: undefined }, {}, 'invalid_request'],
    ];
    for (const [name, body, headers, code] of cases) {
      const answer = await run(account.key, body, headers);
      expect([name, answer.status, answer.json.error?.code]).toEqual([name, 400, code]);
    }
    await expectUntouched(t, account, parseUsd('5'));
    expect((await t.gw.db.query('SELECT 1 FROM operations WHERE account_id = $1', [account.id]))).toEqual([]);
  });

  it('never dispatches an operation id twice: in sequence (even with a changed payload) and concurrently', async () => {
    const account = await t.account('5');
    const id = freshId();
    expect((await run(account.key, execution(['xlsx']), { 'x-gateway-operation-id': id })).status).toBe(200);
    const before = t.sim.requests;
    const reused = await run(account.key, execution(['pdf']), { 'x-gateway-operation-id': id });
    expect([reused.status, reused.json.error.code, reused.headers.get('x-should-retry')]).toEqual([409, 'operation_id_reused', 'false']);
    expect(t.sim.requests).toBe(before);
    const other = freshId();
    const both = await Promise.all([0, 1].map(() => run(account.key, execution(['xlsx']), { 'x-gateway-operation-id': other })));
    expect(both.map((a) => a.status).sort()).toEqual([200, 409]);
  });

  it('gives an operation id back when the execution was refused before dispatch (402), so it can be sent again', async () => {
    const account = await t.account('0');
    const id = freshId();
    const poor = await run(account.key, execution(['xlsx']), { 'x-gateway-operation-id': id });
    expect([poor.status, poor.json.error.code]).toEqual([402, 'insufficient_balance']);
    await t.gw.runtime.ledger.topUp(account.id, parseUsd('5'));
    expect((await run(account.key, execution(['xlsx']), { 'x-gateway-operation-id': id })).status).toBe(200);
  });

  it('allows one pending execution per account', async () => {
    const account = await t.account('5');
    await t.fault({ latency_ms: 400, times: 1 }, 'claude-sonnet-4-5-20250929');
    const both = await Promise.all([run(account.key, execution(['xlsx'])), new Promise((r) => setTimeout(r, 100)).then(() => run(account.key, execution(['xlsx'])))]);
    expect(both.map((a) => [a.status, a.json.error?.code ?? null])).toEqual([[200, null], [409, 'skill_execution_pending']]);
    await t.clearFaults();
  });

  it('allows five completed executions per rolling 24 hours', async () => {
    const account = await t.account('5');
    for (let i = 0; i < 5; i++) expect((await run(account.key, execution(['xlsx']))).status).toBe(200);
    const sixth = await run(account.key, execution(['xlsx']));
    expect([sixth.status, sixth.json.error.code]).toEqual([429, 'rate_limited']);
    expect(Number(sixth.headers.get('retry-after'))).toBeGreaterThan(0);
    clock.advance(24 * 3600_000 + 1000);
    expect((await run(account.key, execution(['xlsx']))).status).toBe(200);
  });

  it('answers execution_recovery_required when the outcome is uncertain, and blocks that operation for good', async () => {
    const account = await t.account('5');
    const id = freshId();
    await t.fault({ truncate_after_chunks: 1, times: 1 }, 'claude-sonnet-4-5-20250929');
    const lost = await run(account.key, execution(['xlsx']), { 'x-gateway-operation-id': id });
    expect([lost.status, lost.json.error.code, lost.headers.get('x-should-retry')]).toEqual([409, 'execution_recovery_required', 'false']);
    expect(lost.json.error.message).toContain(lost.headers.get('x-request-id'));
    const retried = await run(account.key, execution(['xlsx']), { 'x-gateway-operation-id': id });
    expect([retried.status, retried.json.error.code]).toEqual([409, 'execution_recovery_required']);
  });

  it('works with the 0.x SDK (the documented version header) and the operation id header', async () => {
    const account = await t.account('5');
    const sdk = new AnthropicV0({ apiKey: account.key, baseURL: t.url, maxRetries: 0 });
    const message = await sdk.messages.create(execution(['xlsx']) as never, { headers: { 'X-Gateway-Operation-ID': freshId() } });
    expect((message as unknown as { container: { id: string } }).container.id).toMatch(/^container_gw_/);
  });
});
