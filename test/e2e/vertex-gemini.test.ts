/**
 * Gemini on Vertex AI (issue 32 item 3): the vertex provider's generate-content operation, served
 * here by the built-in simulator (no key file: simulated), through chat completions (JSON and
 * stream), messages and responses; each request billed at the offering's price from usageMetadata
 * (thinking tokens as output). With a key file, a token and every client format: vertex-gemini-key.test.ts.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { simRequests } from '../helpers/routing.js';

const NANO_PER_TOKEN = { input: 1250n, output: 10_000n }; // gemini-2.5-pro: $1.25 and $10 per million

describeStore('Gemini on Vertex AI', () => {
  let t: TestGateway;
  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(() => t?.dispose());

  it('serves chat (JSON and stream), messages and responses at the publishers/google path, billed from usageMetadata', async () => {
    const a = await t.account('1');
    const openai = new OpenAI({ apiKey: a.key, baseURL: `${t.url}/v1`, maxRetries: 0 });
    const { data: chat, response: raw } = await openai.chat.completions.create({ model: 'vertex-gemini-2.5-pro', messages: [{ role: 'user', content: 'Hello from Vertex?' }], max_tokens: 64 }).withResponse();
    expect(chat.model).toBe('vertex-gemini-2.5-pro');
    expect(chat.choices[0]!.message.content).toBeTruthy();
    const usage = chat.usage!;
    const stream = await openai.chat.completions.create({ model: 'vertex-gemini-2.5-pro', messages: [{ role: 'user', content: 'Stream it.' }], max_tokens: 64, stream: true, stream_options: { include_usage: true } });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).not.toBe('');
    const anthropic = new Anthropic({ apiKey: a.key, baseURL: t.url, maxRetries: 0 });
    const message = await anthropic.messages.create({ model: 'vertex-gemini-2.5-pro', max_tokens: 64, messages: [{ role: 'user', content: 'And messages?' }] });
    expect(message.content[0]!.type).toBe('text');
    const response = await openai.responses.create({ model: 'vertex-gemini-2.5-pro', input: 'And responses?', max_output_tokens: 64 });
    expect(response.output_text).toBeTruthy();

    const paths = (await simRequests(t, 'gemini-2.5-pro')).map((r) => r.path);
    expect(paths.some((p) => /\/publishers\/google\/models\/gemini-2\.5-pro:generateContent$/.test(p))).toBe(true);
    expect(paths.some((p) => /\/publishers\/google\/models\/gemini-2\.5-pro:streamGenerateContent$/.test(p))).toBe(true); // (the log keeps the path, not alt=sse)

    const rows = (await t.usage(a.id)).data;
    expect(rows.every((r) => r.model === 'vertex-gemini-2.5-pro')).toBe(true);
    expect(new Set(rows.map((r) => r.requestId)).size).toBe(4);
    // The chat request's charge: its tokens at the offering's price (thinking tokens are in completion_tokens).
    const charged = rows.filter((r) => r.requestId === raw.headers.get('x-request-id')).reduce((sum, r) => sum + r.amountNano, 0n);
    expect(charged).toBe(BigInt(usage.prompt_tokens) * NANO_PER_TOKEN.input + BigInt(usage.completion_tokens) * NANO_PER_TOKEN.output);
    const account = await t.settled(a.id);
    expect(account.balanceNano + rows.reduce((s, r) => s + r.amountNano, 0n)).toBe(1_000_000_000n);
  });
});
