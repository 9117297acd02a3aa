/**
 * The responses route (spec 4.2, 4.3) with the official openai SDK: passthrough and chat-only
 * offerings, JSON and streamed; built-in tools; web search calls as their own refundable rows.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { settled, type Account } from '../helpers/chat.js';

describeStore('responses with the openai SDK', () => {
  let t: TestGateway;
  let a: Account;
  let client: OpenAI;

  beforeAll(async () => {
    t = await startTestGateway();
    a = { ...(await t.account('5')), t };
    client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
  });
  afterAll(async () => { await t?.dispose(); });

  for (const model of ['gpt-4o', 'gpt-4o-mini']) {
    it(`creates a response, plain and streamed, on ${model === 'gpt-4o' ? 'a passthrough' : 'a chat-only'} offering`, async () => {
      const plain = await client.responses.create({ model, input: 'Say hi' });
      expect(plain.object).toBe('response');
      expect(plain.model).toBe(model);
      expect(plain.output_text).toContain('Say hi');
      const before = await settled(a);
      const stream = client.responses.stream({ model, input: 'Say hi' });
      const deltas: string[] = [];
      stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
      const final = await stream.finalResponse();
      expect(final.output_text).toBe(plain.output_text);
      expect(deltas.join('')).toBe(plain.output_text);
      expect(final.usage).toMatchObject({ input_tokens: plain.usage!.input_tokens, output_tokens: plain.usage!.output_tokens });
      const after = await settled(a);
      expect(after.rows).toBe(before.rows + 1);
      expect(after.last?.details).toMatchObject({ input: plain.usage!.input_tokens, output: plain.usage!.output_tokens });
      const last = await fetch(`${t.sim.url}/__sim/last`).then((r) => r.json() as Promise<{ path: string }>);
      expect(last.path).toBe(model === 'gpt-4o' ? '/v1/responses' : '/v1/chat/completions');
    });
  }

  it('translates function tools for a chat-only offering', async () => {
    const response = await client.responses.create({
      model: 'gpt-4o-mini', input: 'Weather in Paris?',
      tools: [{ type: 'function', name: 'get_weather', strict: false, parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }],
    });
    const call = response.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather' });
  });

  it('refuses built-in tools on a chat-only offering and unavailable built-ins everywhere', async () => {
    await expect(client.responses.create({ model: 'gpt-4o-mini', input: 'x', tools: [{ type: 'web_search' }] }))
      .rejects.toMatchObject({ status: 400, code: 'unsupported_responses_tools' });
    for (const model of ['gpt-4o', 'gpt-4o-mini']) {
      await expect(client.responses.create({ model, input: 'x', tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }))
        .rejects.toMatchObject({ status: 400, code: 'tool_not_available' });
    }
  });

  it('bills each web search call as its own row, refundable on its own', async () => {
    const before = await settled(a);
    const response = await client.responses.create({ model: 'gpt-4o', input: 'Please search twice for gateways', tools: [{ type: 'web_search' }] });
    expect(response.output.filter((o) => o.type === 'web_search_call')).toHaveLength(2);
    const after = await settled(a);
    const rows = (await t.usage(a.id, { limit: 3 })).data;
    const searches = rows.filter((r) => r.kind === 'web_search');
    expect(searches).toHaveLength(2);
    for (const row of searches) expect(row).toMatchObject({ unit: 'call', quantity: 1n, amountNano: 10_000_000n, requestId: rows[0]!.requestId });
    const tokens = rows.find((r) => r.kind === 'tokens')!;
    expect(before.balanceNano - after.balanceNano).toBe(tokens.amountNano + 20_000_000n);
    const refund = await t.gw.runtime.ledger.refund(searches[0]!.id);
    expect(refund).toMatchObject({ kind: 'refund', amountNano: -10_000_000n, refundOf: searches[0]!.id });
    expect((await t.settled(a.id))!.balanceNano).toBe(after.balanceNano + 10_000_000n);
    const line = (await t.gw.runtime.ledger.reconcile()).find((l) => l.accountId === a.id)!;
    expect(line.differenceNano).toBe(0n);
  });

  it('streams web search calls on a passthrough offering and bills them', async () => {
    const before = await settled(a);
    const final = await client.responses.stream({ model: 'gpt-4o', input: 'search for one thing', tools: [{ type: 'web_search_preview' }] }).finalResponse();
    expect(final.output.filter((o) => o.type === 'web_search_call')).toHaveLength(1);
    const after = await settled(a);
    expect(after.rows).toBe(before.rows + 2);
  });
});
