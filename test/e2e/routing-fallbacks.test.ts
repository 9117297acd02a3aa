/**
 * Model fallbacks (issue 29 items 4, 8): the client's `models` list on chat completions, responses
 * and messages; a gpt-4o-style model falling back to a Claude model, translated; the hold sized for
 * the dearest offering a request may reach; and a request that refers to state held at one vendor (a
 * messages-format file) kept on that vendor's deployment. Through the official SDKs; money conserved.
 */
import Anthropic, { toFile } from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseUsd } from '../../src/money.js';
import { copyConfig } from '../helpers/config.js';
import { describeStore } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { addOpenaiOfferings, chatOffering, expectConserved, simRequests } from '../helpers/routing.js';

/** A second messages-format source (the same simulator, another provider id): a backup region, say. */
const SECOND_ANTHROPIC = `version: 1
id: anthropic_b
base_url: { env: ANTHROPIC_B_BASE_URL, default: "https://api.anthropic.com" }
auth: { scheme: x-api-key, key: env:ANTHROPIC_B_API_KEY }
headers: { anthropic-version: "2023-06-01" }
simulator_when_keyless: true
operations:
  messages:
    method: POST
    path: /v1/messages
    format: anthropic-messages
    answer: { type: sse }
    features:
      files: { headers: { anthropic-beta: files-api-2025-04-14 } }
      skills: { headers: { anthropic-beta: "skills-2025-10-02,code-execution-2025-08-25" } }
  count-tokens: { method: POST, path: /v1/messages/count_tokens, format: anthropic-count-tokens }
offerings: []
`;

const ASK = [{ role: 'user' as const, content: 'Who answers when the first model fails?' }];

describeStore('model fallbacks (issue 29)', () => {
  let t: TestGateway;

  beforeAll(async () => {
    const copy = await copyConfig();
    await copy.write('providers/anthropic_b.yaml', SECOND_ANTHROPIC);
    await addOpenaiOfferings(copy, [
      chatOffering('mx-chat'), chatOffering('mx-resp'), chatOffering('mx-cheap', { fallbacks: ['mx-dear'] }), chatOffering('mx-dear', {}, { input: '2.50', output: '10.00' }),
      chatOffering('fb-gpt', { fallbacks: ['claude-haiku-4-5'] }),
    ]);
    await copy.editYaml('providers/anthropic.yaml', (doc) => {
      const haiku = doc.offerings.find((o: { id: string }) => o.id === 'claude-haiku-4-5');
      doc.offerings.push({ ...haiku, id: 'mx-msg', aliases: undefined, upstream_model: 'mx-msg' });
      doc.offerings.push({ ...haiku, id: 'sticky', aliases: undefined, upstream_model: undefined, deployments: [{ provider: 'anthropic', upstream_model: 'st-a' }, { provider: 'anthropic_b', upstream_model: 'st-b', priority: 1 }] });
    });
    t = await startTestGateway({ configFile: copy.configFile });
  }, 60_000);
  afterAll(async () => { await t?.dispose(); });

  async function account(usd = '5'): Promise<{ id: string; key: string; opening: bigint }> {
    return { ...(await t.account(usd)), opening: parseUsd(usd) };
  }

  it('chat completions: `models` tried after `model`, a Claude model translated, billed once at its price', async () => {
    const a = await account();
    await t.fault({ status: 503 }, 'mx-chat');
    const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'mx-chat', models: ['claude-haiku-4-5'], messages: ASK, stream: true, stream_options: { include_usage: true } } as OpenAI.ChatCompletionCreateParamsStreaming).withResponse();
    let model = '';
    let usage: OpenAI.CompletionUsage | null = null;
    for await (const chunk of data) { model = chunk.model; usage = chunk.usage ?? usage; }
    expect(model).toBe('claude-haiku-4-5');
    expect(response.headers.get('x-gateway-provider')).toBe('anthropic');
    const rows = await expectConserved(t, a.id, a.opening);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ model: 'claude-haiku-4-5', deployment: 'anthropic/claude-haiku-4-5-20251001' });
    // 1 in / 5 out USD per 1M tokens.
    const exact = BigInt(usage!.prompt_tokens) * 1_000_000_000n + BigInt(usage!.completion_tokens) * 5_000_000_000n;
    expect(rows[0]!.amountNano).toBe((exact + 500_000n) / 1_000_000n);
    // The list is the gateway's: the vendor never saw it.
    const sent = (await (await fetch(`${t.sim.url}/__sim/last`)).json()) as { body: Record<string, unknown> };
    expect(sent.body.models).toBeUndefined();
  });

  it('responses: `models` tried after `model`, a native responses model served afresh', async () => {
    const a = await account();
    await t.fault({ status: 503 }, 'mx-resp');
    const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
    const response = await client.responses.create({ model: 'mx-resp', models: ['gpt-4o'], input: 'Hello' } as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    expect(response.model).toBe('gpt-4o');
    expect(response.output_text.length).toBeGreaterThan(0);
    expect(await simRequests(t, 'mx-resp')).toHaveLength(2);
    const rows = await expectConserved(t, a.id, a.opening);
    expect(rows.map((r) => r.model)).toEqual(['gpt-4o']);
  });

  it('messages: `models` tried after `model`', async () => {
    const a = await account();
    await t.fault({ status: 529 }, 'mx-msg');
    const client = new Anthropic({ baseURL: t.url, apiKey: a.key, maxRetries: 0 });
    const message = await client.messages.stream({ model: 'mx-msg', models: ['claude-haiku-4-5'], max_tokens: 128, messages: ASK } as Anthropic.MessageStreamParams).finalMessage();
    expect(message.model).toBe('claude-haiku-4-5');
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    const rows = await expectConserved(t, a.id, a.opening);
    expect(rows.map((r) => r.model)).toEqual(['claude-haiku-4-5']);
  });

  it('an offering falling back to a model of another wire format: translated, billed at the fallback', async () => {
    const a = await account();
    await t.fault({ status: 503 }, 'fb-gpt');
    const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'fb-gpt', messages: ASK });
    expect(completion.model).toBe('claude-haiku-4-5');
    expect(completion.choices[0]!.message.content!.length).toBeGreaterThan(0);
    const rows = await expectConserved(t, a.id, a.opening);
    expect(rows.map((r) => r.model)).toEqual(['claude-haiku-4-5']);
  });

  it('`models` naming an unknown or unusable model is the client\'s 400, with nothing sent', async () => {
    const a = await account();
    const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
    const ask = (models: unknown) => client.chat.completions.create({ model: 'gpt-4o-mini', models, messages: ASK } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
    await expect(ask(['no-such-model'])).rejects.toMatchObject({ status: 400, code: 'model_not_found', param: 'models' });
    await expect(ask(['text-embedding-3-small'])).rejects.toMatchObject({ status: 400, code: 'model_not_available', param: 'models' });
    await expect(ask('gpt-4o')).rejects.toMatchObject({ status: 400 });
    await expectConserved(t, a.id, a.opening);
    expect((await t.usage(a.id)).data).toHaveLength(0);
  });

  it('the hold covers the dearest offering the request may reach: 402 before any upstream call', async () => {
    // Enough for mx-cheap's hold (0.15/0.60 per 1M, 1000 output tokens), not for its fallback's (2.50/10.00).
    const a = await account('0.002');
    const client = new OpenAI({ baseURL: `${t.url}/v1`, apiKey: a.key, maxRetries: 0 });
    const before = (await simRequests(t, 'mx-cheap')).length;
    await expect(client.chat.completions.create({ model: 'mx-cheap', max_tokens: 1000, messages: ASK })).rejects.toMatchObject({ status: 402 });
    expect((await simRequests(t, 'mx-cheap')).length).toBe(before);
    // The same request on a model without that fallback fits.
    const cheap = await client.chat.completions.create({ model: 'gpt-4o-mini', max_tokens: 1000, messages: ASK });
    expect(cheap.model).toBe('gpt-4o-mini');
    await expectConserved(t, a.id, a.opening);
  });

  it('a request referring to a file held at one vendor goes there and is not failed over; others are', async () => {
    const a = await account();
    const client = new Anthropic({ baseURL: t.url, apiKey: a.key, maxRetries: 0 });
    await t.fault({ status: 529 }, 'st-a');
    // Without held state, the backup source serves.
    const plain = await client.messages.create({ model: 'sticky', max_tokens: 64, messages: ASK });
    expect(plain.model).toBe('sticky');
    expect(await simRequests(t, 'st-b')).toHaveLength(1);
    const file = await client.files.upload({ file: await toFile(Buffer.from('The report says revenue grew.'), 'r.txt', { type: 'text/plain' }) });
    const withFile = client.messages.create({
      model: 'sticky', max_tokens: 64,
      messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'file', file_id: file.id } }, { type: 'text', text: 'Summarise.' }] }],
    });
    await expect(withFile).rejects.toMatchObject({ status: 502 });
    expect(await simRequests(t, 'st-b')).toHaveLength(1);
    expect((await simRequests(t, 'st-a')).length).toBeGreaterThanOrEqual(3);
    const rows = await expectConserved(t, a.id, a.opening);
    expect(rows.map((r) => r.deployment)).toEqual(['anthropic_b/st-b']);
  });
});
