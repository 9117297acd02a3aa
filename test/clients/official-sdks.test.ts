/**
 * The official `openai` (6) and `@anthropic-ai/sdk` (1) SDKs, the root's own, beyond the chat and
 * messages calls of test/e2e: images, speech, transcription, responses, tools, models, aliases, the
 * charge header and usage.cost, stored responses, moderations. Real HTTP, unchanged; charges compared
 * with the usage rows of the admin API.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wavOfTenths } from '../helpers/wav.js';
import { adminUsage, lastUpstream, newRows, startClientsGateway, tokenChargeUsd, type ClientsGateway } from './harness.js';
import { pending } from './pending.js';

describe('official openai and Anthropic SDKs beyond chat', () => {
  let g: ClientsGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;

  beforeAll(async () => {
    g = await startClientsGateway();
    openai = new OpenAI({ baseURL: `${g.url}/v1`, apiKey: g.account.key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: g.url, apiKey: g.account.key, maxRetries: 0 });
  });
  afterAll(async () => { await g?.dispose(); });

  const weatherSchema = { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] };

  it('openai images.generate on dall-e-3 (1024x1024 standard): one image, $0.04, the charge in X-Gateway-Cost-USD', async () => {
    const before = await adminUsage(g);
    const { data, response } = await openai.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse', size: '1024x1024', response_format: 'b64_json' }).withResponse();
    expect(data.data).toHaveLength(1);
    expect(Buffer.from(data.data![0]!.b64_json!, 'base64').byteLength).toBeGreaterThan(0);
    const [row] = await newRows(g, before);
    expect(row).toMatchObject({ model: 'dall-e-3', unit: 'image', quantity: 1, amount_usd: '0.04' });
    expect(response.headers.get('x-gateway-cost-usd')).toBe('0.04');
  });

  it('openai audio.transcriptions.create on whisper-1 (json and verbose_json), billed by the started second', async () => {
    const before = await adminUsage(g);
    const file = await toFile(wavOfTenths(25), 'hello.wav', { type: 'audio/wav' });
    const json = await openai.audio.transcriptions.create({ file, model: 'whisper-1' });
    expect(json.text).toMatch(/\S/);
    const verbose = await openai.audio.transcriptions.create({ file: await toFile(wavOfTenths(25), 'hello.wav', { type: 'audio/wav' }), model: 'whisper-1', response_format: 'verbose_json' });
    expect(verbose).toMatchObject({ text: expect.any(String), duration: expect.any(Number) });
    const rows = await newRows(g, before);
    // 2.5 s are 3 started seconds at $0.006 a minute.
    expect(rows.map((r) => [r.model, r.unit, r.quantity, r.amount_usd])).toEqual([['whisper-1', 'second', 3, '0.0003'], ['whisper-1', 'second', 3, '0.0003']]);
  });

  it('openai audio.speech.create on an ElevenLabs model with its own voice: MP3 bytes, billed per character', async () => {
    const before = await adminUsage(g);
    const input = 'Hello from the gateway.';
    const audio = Buffer.from(await (await openai.audio.speech.create({ model: 'eleven_multilingual_v2', voice: 'george', input })).arrayBuffer());
    expect(audio.byteLength).toBeGreaterThan(0);
    const [row] = await newRows(g, before);
    expect(row).toMatchObject({ model: 'eleven_multilingual_v2', unit: 'character', quantity: input.length });
  });

  it('openai responses.create with a function tool on gpt-4o (passthrough) and gpt-4o-mini (translated), usage billed', async () => {
    const tools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'get_weather', parameters: weatherSchema, strict: false }];
    for (const model of ['gpt-4o', 'gpt-4o-mini']) {
      const before = await adminUsage(g);
      const response = await openai.responses.create({ model, input: 'Weather in Paris?', tools });
      const call = response.output.find((o) => o.type === 'function_call');
      expect(call, model).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: JSON.stringify({ city: 'sim' }) });
      const [row] = await newRows(g, before);
      expect(row, model).toMatchObject({ model, details: { input: response.usage!.input_tokens, output: response.usage!.output_tokens } });
      expect(row!.amount_usd).toBe(tokenChargeUsd(model, { input: response.usage!.input_tokens, output: response.usage!.output_tokens }));
    }
  });

  it('Anthropic messages with a tool, streamed and not: tool_use blocks and the billed usage', async () => {
    const tools: Anthropic.Tool[] = [{ name: 'get_weather', description: 'Current weather of a city', input_schema: weatherSchema }];
    const before = await adminUsage(g);
    const message = await anthropic.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { city: 'sim' } });
    const streamed = await anthropic.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 64, tools, messages: [{ role: 'user', content: 'Weather in Paris?' }] }).finalMessage();
    expect(streamed.content.find((b) => b.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { city: 'sim' } });
    const [streamRow, jsonRow] = await newRows(g, before);
    for (const [row, usage] of [[jsonRow, message.usage], [streamRow, streamed.usage]] as const) {
      expect(row).toMatchObject({ model: 'claude-sonnet-4-5', details: { input: usage.input_tokens, output: usage.output_tokens } });
      expect(row!.amount_usd).toBe(tokenChargeUsd('claude-sonnet-4-5', { input: usage.input_tokens, output: usage.output_tokens }));
    }
  });

  // Item 4: vendor model ids and dated snapshots are aliases of the catalogue's offerings.
  it.skipIf(pending('item-4'))('aliases: gpt-4o-2024-08-06 with openai, claude-sonnet-4-5-20250929 with both SDKs, priced as their offering', async () => {
    const before = await adminUsage(g);
    const completion = await openai.chat.completions.create({ model: 'gpt-4o-2024-08-06', messages: [{ role: 'user', content: 'Hello' }] });
    const viaChat = await openai.chat.completions.create({ model: 'claude-sonnet-4-5-20250929', max_tokens: 32, messages: [{ role: 'user', content: 'Hello' }] });
    const message = await anthropic.messages.create({ model: 'claude-sonnet-4-5-20250929', max_tokens: 32, messages: [{ role: 'user', content: 'Hello' }] });
    expect((await lastUpstream(g)).body.model).toBe('claude-sonnet-4-5-20250929');
    const [messageRow, chatRow, gptRow] = await newRows(g, before);
    expect(gptRow!.amount_usd).toBe(tokenChargeUsd('gpt-4o', { input: completion.usage!.prompt_tokens, output: completion.usage!.completion_tokens }));
    expect(chatRow!.amount_usd).toBe(tokenChargeUsd('claude-sonnet-4-5', { input: viaChat.usage!.prompt_tokens, output: viaChat.usage!.completion_tokens }));
    expect(messageRow!.amount_usd).toBe(tokenChargeUsd('claude-sonnet-4-5', { input: message.usage.input_tokens, output: message.usage.output_tokens }));
  });

  // Item 5: GET /v1/models in the shape each SDK parses (Anthropic's: type, display_name, created_at, has_more, first_id, last_id).
  it.skipIf(pending('item-5'))('models.list with the Anthropic SDK: Claude models with display names, paged', async () => {
    const ids: string[] = [];
    for await (const model of anthropic.models.list()) {
      expect(model).toMatchObject({ type: 'model', id: expect.any(String), display_name: expect.any(String), created_at: expect.any(String) });
      ids.push(model.id);
    }
    expect(ids).toEqual(expect.arrayContaining(['claude-sonnet-4-5', 'claude-haiku-4-5']));
    expect(await anthropic.models.retrieve('claude-sonnet-4-5')).toMatchObject({ type: 'model', id: 'claude-sonnet-4-5' });
    const openaiIds: string[] = [];
    for await (const model of openai.models.list()) openaiIds.push(model.id);
    expect(openaiIds).toEqual(expect.arrayContaining(['gpt-4o-mini', 'claude-sonnet-4-5']));
  });

  // Item 6: OpenAI's speech models and voices.
  it.skipIf(pending('item-6'))('audio.speech.create on tts-1, tts-1-hd and gpt-4o-mini-tts with OpenAI voices, and alloy on an ElevenLabs model', async () => {
    for (const model of ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts']) {
      const audio = Buffer.from(await (await openai.audio.speech.create({ model, voice: 'alloy', input: 'Hello.' })).arrayBuffer());
      expect(audio.byteLength, model).toBeGreaterThan(0);
    }
    const eleven = Buffer.from(await (await openai.audio.speech.create({ model: 'eleven_multilingual_v2', voice: 'alloy', input: 'Hello.' })).arrayBuffer());
    expect(eleven.byteLength).toBeGreaterThan(0);
  });

  // Item 7: the plain-text transcription formats and streamed transcription.
  it.skipIf(pending('item-7'))('audio.transcriptions.create with response_format text, srt and vtt, and stream: true', async () => {
    const file = async () => toFile(wavOfTenths(25), 'hello.wav', { type: 'audio/wav' });
    const text = await openai.audio.transcriptions.create({ file: await file(), model: 'whisper-1', response_format: 'text' });
    expect(typeof text).toBe('string');
    const srt = await openai.audio.transcriptions.create({ file: await file(), model: 'whisper-1', response_format: 'srt' });
    expect(srt).toMatch(/^1\r?\n\d\d:\d\d:\d\d,\d{3} --> /);
    const vtt = await openai.audio.transcriptions.create({ file: await file(), model: 'whisper-1', response_format: 'vtt' });
    expect(vtt).toMatch(/^WEBVTT/);
    const stream = await openai.audio.transcriptions.create({ file: await file(), model: 'gpt-4o-mini-transcribe', stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types.at(-1)).toBe('transcript.text.done');
  });

  // Item 8: dall-e-3 and dall-e-2 at every size and quality, each at its own price.
  it.skipIf(pending('item-8'))('images.generate on dall-e-3 hd 1792x1024 ($0.12) and dall-e-2 256x256 ($0.016)', async () => {
    const before = await adminUsage(g);
    const hd = await openai.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse', size: '1792x1024', quality: 'hd' }).withResponse();
    expect(hd.response.headers.get('x-gateway-cost-usd')).toBe('0.12');
    const small = await openai.images.generate({ model: 'dall-e-2', prompt: 'a lighthouse', size: '256x256' }).withResponse();
    expect(small.response.headers.get('x-gateway-cost-usd')).toBe('0.016');
    expect((await newRows(g, before)).map((r) => r.amount_usd)).toEqual(['0.016', '0.12']);
  });

  // Item 9: the same X-Gateway-Operation-ID replays the first answer and charges once (passes today).
  it('images.generate twice with one X-Gateway-Operation-ID: the same image, one charge', async () => {
    const before = await adminUsage(g);
    const headers = { 'X-Gateway-Operation-ID': `op-${Date.now()}` };
    const first = await openai.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse', response_format: 'b64_json' }, { headers });
    const second = await openai.images.generate({ model: 'dall-e-3', prompt: 'a lighthouse', response_format: 'b64_json' }, { headers });
    expect(second.data![0]!.b64_json).toBe(first.data![0]!.b64_json);
    expect(await newRows(g, before)).toHaveLength(1);
  });

  // Item 10: OpenAI's moderation model on /v1/moderations.
  it.skipIf(pending('item-10'))('moderations.create with omni-moderation-latest: OpenAI-shaped results', async () => {
    const result = await openai.moderations.create({ model: 'omni-moderation-latest', input: 'I want to hug everyone.' });
    expect(result.results).toHaveLength(1);
    expect(result.results[0]).toMatchObject({ flagged: expect.any(Boolean), categories: expect.any(Object), category_scores: expect.any(Object) });
  });

  // Item 12, the part that holds today: every non-streaming billed answer carries its charge.
  it('X-Gateway-Cost-USD on chat, responses, messages, embeddings, speech and transcription answers equals each row', async () => {
    const before = await adminUsage(g);
    const answers = [
      await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] }).withResponse(),
      await openai.chat.completions.create({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] }).withResponse(),
      await openai.responses.create({ model: 'gpt-4o', input: 'Hello' }).withResponse(),
      await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] }).withResponse(),
      await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'Hello' }).withResponse(),
      await openai.audio.speech.create({ model: 'eleven_multilingual_v2', voice: 'george', input: 'Hello' }).withResponse(),
      await openai.audio.transcriptions.create({ model: 'whisper-1', file: await toFile(wavOfTenths(10), 'hello.wav', { type: 'audio/wav' }) }).withResponse(),
    ];
    const rows = (await newRows(g, before)).reverse();
    expect(rows).toHaveLength(answers.length);
    expect(answers.map((a) => a.response.headers.get('x-gateway-cost-usd'))).toEqual(rows.map((r) => r.amount_usd));
  });

  // Item 12: usage.cost in the final usage of chat, responses and messages.
  it.skipIf(pending('item-12'))('usage.cost on chat (JSON and streamed), responses and messages equals the row', async () => {
    const before = await adminUsage(g);
    const chat = await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] });
    const response = await openai.responses.create({ model: 'gpt-4o', input: 'Hello' });
    const message = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 32, messages: [{ role: 'user', content: 'Hello' }] });
    let streamedCost: unknown;
    for await (const chunk of await openai.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }], stream: true, stream_options: { include_usage: true } })) {
      if (chunk.usage) streamedCost = (chunk.usage as unknown as { cost: unknown }).cost;
    }
    const [streamRow, messageRow, responseRow, chatRow] = await newRows(g, before);
    const cost = (usage: unknown): number => Number((usage as { cost: unknown }).cost);
    expect(cost(chat.usage)).toBe(Number(chatRow!.amount_usd));
    expect(cost(response.usage)).toBe(Number(responseRow!.amount_usd));
    expect(cost(message.usage)).toBe(Number(messageRow!.amount_usd));
    expect(Number(streamedCost)).toBe(Number(streamRow!.amount_usd));
  });

  // Not in issue 31's list (found by these tests): the simulator answers one choice whatever `n`, and
  // `logprobs: null` when asked for logprobs; the gateway forwards both (the vendor would honour them).
  it.skipIf(pending('unlisted-sim-n-logprobs'))('chat.completions with n: 2 and logprobs on gpt-4o-mini: two choices with logprobs', async () => {
    const completion = await openai.chat.completions.create({ model: 'gpt-4o-mini', n: 2, logprobs: true, messages: [{ role: 'user', content: 'Hello' }] });
    expect(completion.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(completion.choices.every((c) => Array.isArray(c.logprobs?.content))).toBe(true);
    expect((await lastUpstream(g)).body).toMatchObject({ n: 2, logprobs: true });
  });

  // Items 2 and 3: a Claude model on /v1/responses, stored and chained.
  it.skipIf(pending('item-2', 'item-3'))('stored responses on claude-sonnet-4-5: retrieve, input_items, previous_response_id, delete', async () => {
    const first = await openai.responses.create({ model: 'claude-sonnet-4-5', input: 'My name is Ada.', store: true });
    expect(await openai.responses.retrieve(first.id)).toMatchObject({ id: first.id, status: 'completed', output_text: first.output_text });
    const items = await openai.responses.inputItems.list(first.id);
    expect(items.data.map((i) => i.type)).toEqual(['message']);
    const second = await openai.responses.create({ model: 'claude-sonnet-4-5', input: 'What is my name?', previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    expect((await lastUpstream(g)).body.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    await openai.responses.delete(first.id);
    await expect(openai.responses.retrieve(first.id)).rejects.toMatchObject({ status: 404 });
  });
});
