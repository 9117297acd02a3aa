/**
 * Money errors on the real HTTP path (issue 8 item 6), in each client format: a 402 says what the
 * hold needed, what is available and the largest output cap that fits (retrying with it succeeds,
 * one more is refused, and a balance of exactly the stated need succeeds); an output cap above the
 * model's is a 400 naming the limit, before any reservation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatUsd, parseUsd } from '../../src/money.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

type Format = 'chat' | 'responses' | 'messages';
const PATHS: Record<Format, string> = { chat: '/v1/chat/completions', responses: '/v1/responses', messages: '/v1/messages' };

/** A client error, read from either body shape. */
interface Answer { status: number; error: { message: string; code: string; type: string; param?: string | null } | null }

/** The figures a 402 message states. */
interface Stated { needed: string; available: string; param: string; fitting: number }

const STATED = /needs \$([\d.]+) reserved \(.*\); \$([\d.]+) is available\. (?:Lower|Set) (\w+) to (\d+) or less, or top up\.$/;

function stated(message: string): Stated {
  const match = STATED.exec(message);
  expect(match, message).not.toBeNull();
  return { needed: match![1]!, available: match![2]!, param: match![3]!, fitting: Number(match![4]) };
}

describeStore('money errors', () => {
  let t: TestGateway;

  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });

  async function post(format: Format, key: string, body: Record<string, unknown>): Promise<Answer> {
    const headers: Record<string, string> = { 'content-type': 'application/json', ...(format === 'messages' ? { 'x-api-key': key, 'anthropic-version': '2023-06-01' } : { authorization: `Bearer ${key}` }) };
    const res = await fetch(`${t.url}${PATHS[format]}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const json = (await res.json()) as { type?: string; error?: Answer['error'] };
    if (format === 'messages' && res.status >= 400) expect(json.type).toBe('error');
    return { status: res.status, error: res.status >= 400 ? json.error! : null };
  }

  const balance = async (id: string): Promise<bigint> => (await t.settled(id))!.balanceNano;

  interface Case { name: string; format: Format; body: Record<string, unknown>; param: string; capName: string; cap: number; clientSet: boolean; type: string }
  const chatMessages = [{ role: 'user', content: 'How much does this cost?' }];
  const cases: Case[] = [
    { name: 'chat completions, max_tokens', format: 'chat', body: { model: 'gpt-4o-mini', messages: chatMessages, max_tokens: 4096 }, param: 'max_tokens', capName: 'max_tokens', cap: 4096, clientSet: true, type: 'insufficient_balance' },
    { name: 'chat completions, max_completion_tokens', format: 'chat', body: { model: 'gpt-4o-mini', messages: chatMessages, max_completion_tokens: 8000 }, param: 'max_completion_tokens', capName: 'max_completion_tokens', cap: 8000, clientSet: true, type: 'insufficient_balance' },
    // The route's max_tokens default (4096) is what the hold priced when the client sets none.
    { name: 'chat completions over a messages-format model, default max_tokens', format: 'chat', body: { model: 'claude-haiku-4-5', messages: chatMessages }, param: 'max_tokens', capName: 'max_tokens', cap: 4096, clientSet: false, type: 'insufficient_balance' },
    { name: 'messages, max_tokens', format: 'messages', body: { model: 'claude-haiku-4-5', max_tokens: 4096, messages: chatMessages }, param: 'max_tokens', capName: 'max_tokens', cap: 4096, clientSet: true, type: 'billing_error' },
    // No cap set: the hold priced the model's 16384-token output cap.
    { name: 'responses (passthrough), no max_output_tokens', format: 'responses', body: { model: 'gpt-4o', input: 'How much does this cost?' }, param: 'max_output_tokens', capName: 'max_output_tokens', cap: 16384, clientSet: false, type: 'insufficient_balance' },
    { name: 'responses (chat-only), max_output_tokens', format: 'responses', body: { model: 'gpt-4o-mini', input: 'How much does this cost?', max_output_tokens: 10000 }, param: 'max_output_tokens', capName: 'max_output_tokens', cap: 10000, clientSet: true, type: 'insufficient_balance' },
  ];

  describe('402 insufficient_balance', () => {
    for (const c of cases) {
      it(`${c.name}: states need, available and the exact cap that fits`, async () => {
        // A little, half of it as credit: available is balance plus credit limit.
        const { id, key } = await t.account('0.0005', '0.0005');
        const refused = await post(c.format, key, c.body);
        expect(refused.status).toBe(402);
        expect(refused.error).toMatchObject({ code: 'insufficient_balance', type: c.type });
        const s = stated(refused.error!.message);
        expect(refused.error!.message).toContain(c.clientSet ? `plus ${c.capName} ${c.cap} of output` : `plus ${c.cap} output tokens, the default when ${c.capName} is not set`);
        expect(s.available).toBe('0.001');
        expect(s.param).toBe(c.param);
        if (c.format !== 'messages') expect(refused.error!.param).toBe(c.param);
        expect(s.fitting).toBeGreaterThan(0);
        expect(s.fitting).toBeLessThan(c.cap);
        expect(await balance(id)).toBe(parseUsd('0.0005'));

        // One token more than suggested is still refused; the suggestion itself goes through.
        const body = (cap: number) => ({ ...c.body, [c.param]: cap });
        const over = await post(c.format, key, body(s.fitting + 1));
        expect(over.status).toBe(402);
        expect(stated(over.error!.message)).toMatchObject({ available: '0.001', fitting: s.fitting });
        expect((await post(c.format, key, body(s.fitting))).status).toBe(200);
        expect(await balance(id)).toBeLessThan(parseUsd('0.0005'));

        // The stated need is exact: a balance of exactly it passes, one nano less does not.
        const exact = await t.account(s.needed);
        expect((await post(c.format, exact.key, c.body)).status).toBe(200);
        const short = await t.account(formatUsd(parseUsd(s.needed) - 1n));
        const shortAnswer = await post(c.format, short.key, c.body);
        expect(shortAnswer.status).toBe(402);
        expect(stated(shortAnswer.error!.message)).toMatchObject({ needed: s.needed, fitting: c.cap - 1 });
      });
    }

    it('says to top up, with no param, when not even an output cap of 1 fits', async () => {
      const { key } = await t.account('0');
      for (const c of [cases[0]!, cases[3]!, cases[4]!]) {
        const refused = await post(c.format, key, c.body);
        expect(refused.status).toBe(402);
        expect(refused.error!.message).toMatch(new RegExp(`^Insufficient balance: this request needs \\$[\\d.]+ reserved \\(.*\\); \\$0 is available\\. That is not enough even for ${c.capName} 1: top up\\.$`));
        if (c.format !== 'messages') expect(refused.error!.param).toBeNull();
      }
    });
  });

  describe('400 above the model output cap', () => {
    const over: Array<{ name: string; format: Format; body: Record<string, unknown>; param: string; value: number; limit: number; model: string; type: string }> = [
      { name: 'chat, max_tokens', format: 'chat', body: { model: 'gpt-4o-mini', messages: chatMessages, max_tokens: 50000 }, param: 'max_tokens', value: 50000, limit: 16384, model: 'gpt-4o-mini', type: 'invalid_request_error' },
      { name: 'chat, max_completion_tokens', format: 'chat', body: { model: 'gpt-4o-mini', messages: chatMessages, max_completion_tokens: 16385 }, param: 'max_completion_tokens', value: 16385, limit: 16384, model: 'gpt-4o-mini', type: 'invalid_request_error' },
      { name: 'chat over messages, max_tokens', format: 'chat', body: { model: 'claude-haiku-4-5', messages: chatMessages, max_tokens: 64001 }, param: 'max_tokens', value: 64001, limit: 64000, model: 'claude-haiku-4-5', type: 'invalid_request_error' },
      { name: 'messages, max_tokens', format: 'messages', body: { model: 'claude-haiku-4-5', messages: chatMessages, max_tokens: 64001 }, param: 'max_tokens', value: 64001, limit: 64000, model: 'claude-haiku-4-5', type: 'invalid_request_error' },
      { name: 'responses (passthrough), max_output_tokens', format: 'responses', body: { model: 'gpt-4o', input: 'hi', max_output_tokens: 16385 }, param: 'max_output_tokens', value: 16385, limit: 16384, model: 'gpt-4o', type: 'invalid_request_error' },
      { name: 'responses (chat-only), max_output_tokens', format: 'responses', body: { model: 'gpt-4o-mini', input: 'hi', max_output_tokens: 100000 }, param: 'max_output_tokens', value: 100000, limit: 16384, model: 'gpt-4o-mini', type: 'invalid_request_error' },
    ];
    for (const c of over) {
      it(`${c.name}: names the limit, before any reservation; the limit itself is accepted`, async () => {
        // An empty account: a 400 rather than a 402 shows the check runs before the reservation.
        const broke = await t.account('0');
        const refused = await post(c.format, broke.key, c.body);
        expect(refused.status).toBe(400);
        expect(refused.error).toMatchObject({ code: 'invalid_request', type: c.type, message: `${c.param} is ${c.value}, above the ${c.limit} output tokens model "${c.model}" can produce.` });
        if (c.format !== 'messages') expect(refused.error!.param).toBe(c.param);
        expect(await balance(broke.id)).toBe(0n);
        const funded = await t.account('1');
        expect((await post(c.format, funded.key, { ...c.body, [c.param]: c.limit })).status).toBe(200);
      });
    }
  });
});
