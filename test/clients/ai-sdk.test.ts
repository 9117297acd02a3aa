/**
 * The Vercel AI SDK (`ai` 6 with @ai-sdk/openai 3, @ai-sdk/anthropic 3, @ai-sdk/openai-compatible 2:
 * the last majors that run on Node 20) against a real gateway, unchanged, over real HTTP. What each
 * library reports as usage must be what the usage row (admin API) recorded and charged.
 */
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { embed, embedMany, experimental_generateSpeech, experimental_transcribe, generateImage, generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { wavOfTenths } from '../helpers/wav.js';
import { adminUsage, lastUpstream, newRows, startClientsGateway, tokenChargeUsd, type ClientsGateway } from './harness.js';
import { pending } from './pending.js';

describe('AI SDK against the gateway', () => {
  let g: ClientsGateway;
  let openai: ReturnType<typeof createOpenAI>;
  let anthropic: ReturnType<typeof createAnthropic>;
  let compatible: ReturnType<typeof createOpenAICompatible>;

  beforeAll(async () => {
    g = await startClientsGateway();
    // README "Clients": the OpenAI and OpenAI-compatible providers take .../v1, and so does the
    // Anthropic provider (it appends /messages to its base URL).
    openai = createOpenAI({ baseURL: `${g.url}/v1`, apiKey: g.account.key });
    anthropic = createAnthropic({ baseURL: `${g.url}/v1`, apiKey: g.account.key });
    compatible = createOpenAICompatible({ name: 'gateway', baseURL: `${g.url}/v1`, apiKey: g.account.key, includeUsage: true });
  });
  afterAll(async () => { await g?.dispose(); });

  const weather = tool({
    description: 'Current weather of a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, celsius: 21 }),
  });

  it('openai.chat: generateText bills the usage it reports', async () => {
    const before = await adminUsage(g);
    const { text, usage } = await generateText({ model: openai.chat('gpt-4o-mini'), prompt: 'Say hello' });
    expect(text).toMatch(/\S/);
    const [row, ...more] = await newRows(g, before);
    expect(more).toEqual([]);
    expect(row).toMatchObject({ kind: 'tokens', model: 'gpt-4o-mini', details: { input: usage.inputTokens, output: usage.outputTokens } });
    expect(row!.amount_usd).toBe(tokenChargeUsd('gpt-4o-mini', { input: usage.inputTokens!, output: usage.outputTokens! }));
    expect(usage.totalTokens).toBe(usage.inputTokens! + usage.outputTokens!);
  });

  it('openai.chat: streamText streams the same text and its final usage is the row', async () => {
    const json = await generateText({ model: openai.chat('gpt-4o-mini'), prompt: 'Stream please' });
    const before = await adminUsage(g);
    const result = streamText({ model: openai.chat('gpt-4o-mini'), prompt: 'Stream please' });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe(json.text);
    const usage = await result.usage;
    expect([usage.inputTokens, usage.outputTokens]).toEqual([json.usage.inputTokens, json.usage.outputTokens]);
    // The provider asks for usage in the stream (stream_options.include_usage).
    expect((await lastUpstream(g)).body.stream_options).toEqual({ include_usage: true });
    const [row] = await newRows(g, before);
    expect(row!.details).toMatchObject({ input: usage.inputTokens, output: usage.outputTokens });
  });

  it('openai.chat: a function tool is called, executed and answered in a second step, two rows billed', async () => {
    const before = await adminUsage(g);
    const result = await generateText({ model: openai.chat('gpt-4o-mini'), prompt: 'Weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
    const calls = result.steps.flatMap((s) => s.toolCalls);
    expect(calls.map((c) => [c.toolName, c.input])).toEqual([['get_weather', { city: 'sim' }]]);
    expect(result.steps.flatMap((s) => s.toolResults).map((r) => r.output)).toEqual([{ city: 'sim', celsius: 21 }]);
    expect(result.steps.length).toBe(2);
    expect(result.text).toMatch(/\S/);
    const rows = await newRows(g, before);
    expect(rows).toHaveLength(2);
    expect(rows.map((r) => r.details.input).reverse()).toEqual(result.steps.map((s) => s.usage.inputTokens));
    expect(rows.reduce((n, r) => n + Number(r.details.output), 0)).toBe(result.totalUsage.outputTokens);
  });

  it('openai(model) (the responses API): gpt-4o passthrough and gpt-4o-mini translated, JSON and streamed', async () => {
    for (const model of ['gpt-4o', 'gpt-4o-mini']) {
      const before = await adminUsage(g);
      const json = await generateText({ model: openai(model), prompt: 'Hello responses' });
      expect(json.text, model).toMatch(/\S/);
      const [row] = await newRows(g, before);
      expect(row, model).toMatchObject({ model, details: { input: json.usage.inputTokens, output: json.usage.outputTokens } });
      expect(row!.amount_usd).toBe(tokenChargeUsd(model, { input: json.usage.inputTokens!, output: json.usage.outputTokens! }));
      const streamed = streamText({ model: openai(model), prompt: 'Hello responses' });
      let text = '';
      for await (const delta of streamed.textStream) text += delta;
      expect(text, model).toBe(json.text);
      expect((await streamed.usage).outputTokens).toBe(json.usage.outputTokens);
    }
  });

  it('openai(model): a function tool round trip on the responses API (gpt-4o-mini, translated)', async () => {
    const result = await generateText({ model: openai('gpt-4o-mini'), prompt: 'Weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
    expect(result.steps.flatMap((s) => s.toolCalls).map((c) => [c.toolName, c.input])).toEqual([['get_weather', { city: 'sim' }]]);
    expect(result.steps.length).toBe(2);
    expect(result.text).toMatch(/\S/);
  });

  it('openai(model): a streamed tool round trip on the responses API, gpt-4o (passthrough) and gpt-4o-mini (translated)', async () => {
    for (const model of ['gpt-4o', 'gpt-4o-mini']) {
      const before = await adminUsage(g);
      const result = streamText({ model: openai(model), prompt: 'Weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
      await result.consumeStream();
      const steps = await result.steps;
      expect(steps.flatMap((s) => s.toolCalls).map((c) => [c.toolName, c.input]), model).toEqual([['get_weather', { city: 'sim' }]]);
      expect(steps.length).toBe(2);
      const rows = await newRows(g, before);
      expect(rows.map((r) => r.details.output).reduce((a, b) => Number(a) + Number(b), 0)).toBe((await result.totalUsage).outputTokens);
    }
  });

  it('openai(o4-mini) with reasoningEffort on the responses API: usage billed at o4-mini prices', async () => {
    const before = await adminUsage(g);
    const result = await generateText({ model: openai('o4-mini'), prompt: 'Think briefly', providerOptions: { openai: { reasoningEffort: 'low' } } });
    expect((await lastUpstream(g)).body.reasoning).toMatchObject({ effort: 'low' });
    const [row] = await newRows(g, before);
    expect(row).toMatchObject({ model: 'o4-mini', details: { input: result.usage.inputTokens, output: result.usage.outputTokens } });
  });

  it('openai.chat on a Claude model (chat completions translated to messages): text and a streamed tool round trip', async () => {
    const before = await adminUsage(g);
    const json = await generateText({ model: openai.chat('claude-haiku-4-5'), prompt: 'Hello Claude', maxOutputTokens: 32 });
    expect(json.text).toMatch(/\S/);
    expect((await lastUpstream(g)).body).toMatchObject({ model: 'claude-haiku-4-5-20251001', max_tokens: 32 });
    const [row] = await newRows(g, before);
    expect(row!.amount_usd).toBe(tokenChargeUsd('claude-haiku-4-5', { input: json.usage.inputTokens!, output: json.usage.outputTokens! }));
    const streamed = streamText({ model: openai.chat('claude-sonnet-4-5'), prompt: 'Weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3), maxOutputTokens: 32 });
    await streamed.consumeStream();
    const steps = await streamed.steps;
    expect(steps.flatMap((s) => s.toolCalls).map((c) => [c.toolName, c.input])).toEqual([['get_weather', { city: 'sim' }]]);
    expect(steps.length).toBe(2);
  });

  it('embed and embedMany (openai.embedding) bill the tokens they report', async () => {
    const before = await adminUsage(g);
    const one = await embed({ model: openai.embedding('text-embedding-3-small'), value: 'sunny day at the beach' });
    expect(one.embedding).toHaveLength(1536);
    const many = await embedMany({ model: openai.embedding('text-embedding-3-small'), values: ['sunny day', 'rainy night'] });
    expect(many.embeddings.map((e) => e.length)).toEqual([1536, 1536]);
    const rows = await newRows(g, before);
    expect(rows.map((r) => [r.kind, r.model, r.quantity])).toEqual([
      ['embeddings', 'text-embedding-3-small', many.usage.tokens],
      ['embeddings', 'text-embedding-3-small', one.usage.tokens],
    ]);
  });

  it('@ai-sdk/anthropic (base URL .../v1): streamText on claude-haiku-4-5, usage billed', async () => {
    const before = await adminUsage(g);
    const streamed = streamText({ model: anthropic('claude-haiku-4-5'), prompt: 'Hello Claude', maxOutputTokens: 64 });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    expect(text).toMatch(/\S/);
    const usage = await streamed.usage;
    const last = await lastUpstream(g);
    expect([last.path, last.body.model, last.body.stream, last.body.max_tokens]).toEqual(['/v1/messages', 'claude-haiku-4-5-20251001', true, 64]);
    const [row, ...more] = await newRows(g, before);
    expect(more).toEqual([]);
    expect(row).toMatchObject({ model: 'claude-haiku-4-5', details: { input: usage.inputTokens, output: usage.outputTokens } });
    expect(row!.amount_usd).toBe(tokenChargeUsd('claude-haiku-4-5', { input: usage.inputTokens!, output: usage.outputTokens! }));
  });

  it('prompt caching: @ai-sdk/anthropic cacheControl writes then reads the cache, openai promptCacheKey reads it; each priced at its rate', async () => {
    const system = `You are a cached assistant. ${'Context. '.repeat(300)}`;
    for (const expected of ['write', 'read'] as const) {
      const before = await adminUsage(g);
      const streamed = streamText({
        model: anthropic('claude-sonnet-4-5'), maxOutputTokens: 16,
        messages: [{ role: 'system', content: system, providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } } }, { role: 'user', content: 'one' }],
      });
      await streamed.consumeStream();
      const usage = await streamed.usage;
      const { cacheReadTokens = 0, cacheWriteTokens = 0 } = usage.inputTokenDetails;
      expect(expected === 'write' ? cacheWriteTokens : cacheReadTokens, expected).toBeGreaterThan(0);
      const [row] = await newRows(g, before);
      expect(row!.details).toMatchObject({ input: usage.inputTokens, output: usage.outputTokens, cached: cacheReadTokens, cache_write: cacheWriteTokens });
      expect(row!.amount_usd).toBe(tokenChargeUsd('claude-sonnet-4-5', { input: usage.inputTokens!, output: usage.outputTokens!, cached: cacheReadTokens, cacheWrite: cacheWriteTokens }));
    }
    const before = await adminUsage(g);
    const cached = await generateText({ model: openai.chat('gpt-4o-mini'), prompt: 'cache me please, a long prompt', providerOptions: { openai: { promptCacheKey: 'k1' } } });
    const cacheRead = cached.usage.inputTokenDetails.cacheReadTokens!;
    expect(cacheRead).toBeGreaterThan(0);
    const [row] = await newRows(g, before);
    expect(row!.amount_usd).toBe(tokenChargeUsd('gpt-4o-mini', { input: cached.usage.inputTokens!, output: cached.usage.outputTokens!, cached: cacheRead }));
  });

  // Item 13: the simulator's JSON messages answer carries `citations: null` on text blocks, which the
  // provider's response schema rejects ("Invalid JSON response": content.0.citations expected array).
  it.skipIf(pending('item-13'))('@ai-sdk/anthropic: generateText on claude-haiku-4-5 equals the stream, and a tool round trip on claude-sonnet-4-5', async () => {
    const before = await adminUsage(g);
    const json = await generateText({ model: anthropic('claude-haiku-4-5'), prompt: 'Hello Claude', maxOutputTokens: 64 });
    const [row] = await newRows(g, before);
    expect(row).toMatchObject({ model: 'claude-haiku-4-5', details: { input: json.usage.inputTokens, output: json.usage.outputTokens } });
    const streamed = streamText({ model: anthropic('claude-haiku-4-5'), prompt: 'Hello Claude', maxOutputTokens: 64 });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    expect(text).toBe(json.text);
    const result = await generateText({ model: anthropic('claude-sonnet-4-5'), prompt: 'Weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3), maxOutputTokens: 64 });
    expect(result.steps.flatMap((s) => s.toolCalls).map((c) => [c.toolName, c.input])).toEqual([['get_weather', { city: 'sim' }]]);
    expect(result.steps.length).toBe(2);
    // Natural length: without a limit of its own the provider asks max_tokens 4096; the answer stops by itself.
    const natural = await generateText({ model: anthropic('claude-haiku-4-5'), prompt: 'Hello Claude' });
    expect(natural.finishReason).toBe('stop');
    expect(natural.usage.outputTokens).toBeLessThan(4096);
  });

  it('@ai-sdk/anthropic: a streamed tool round trip on claude-sonnet-4-5', async () => {
    const result = streamText({ model: anthropic('claude-sonnet-4-5'), prompt: 'Weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3), maxOutputTokens: 64 });
    await result.consumeStream();
    const steps = await result.steps;
    expect(steps.flatMap((s) => s.toolCalls).map((c) => [c.toolName, c.input])).toEqual([['get_weather', { city: 'sim' }]]);
    expect(steps.flatMap((s) => s.toolResults).map((r) => r.output)).toEqual([{ city: 'sim', celsius: 21 }]);
    expect(steps.length).toBe(2);
  });

  it('@ai-sdk/openai-compatible: chat, stream with usage, and embeddings', async () => {
    const before = await adminUsage(g);
    const json = await generateText({ model: compatible.chatModel('gpt-4o-mini'), prompt: 'Hello compatible' });
    const streamed = streamText({ model: compatible.chatModel('gpt-4o-mini'), prompt: 'Hello compatible' });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    expect(text).toBe(json.text);
    expect((await streamed.usage).inputTokens).toBe(json.usage.inputTokens);
    const vector = await embed({ model: compatible.embeddingModel('embed-pro'), value: 'compatible' });
    expect(vector.embedding).toHaveLength(1536);
    const rows = await newRows(g, before);
    expect(rows.map((r) => [r.model, r.kind === 'embeddings' ? r.quantity : r.details.input])).toEqual([
      ['embed-pro', vector.usage.tokens],
      ['gpt-4o-mini', json.usage.inputTokens],
      ['gpt-4o-mini', json.usage.inputTokens],
    ]);
  });

  // Item 13: the simulator answers a response_format json_schema with JSON that fits the schema.
  it.skipIf(pending('item-13'))('generateObject on openai.chat(gpt-4o-mini): the object fits the schema', async () => {
    const { object, usage } = await generateObject({ model: openai.chat('gpt-4o-mini'), schema: z.object({ city: z.string(), celsius: z.number() }), prompt: 'Weather in Paris as JSON' });
    expect(object).toEqual({ city: expect.any(String), celsius: expect.any(Number) });
    expect((await lastUpstream(g)).body.response_format).toMatchObject({ type: 'json_schema', json_schema: { name: expect.any(String), schema: expect.any(Object) } });
    expect(usage.outputTokens).toBeGreaterThan(0);
  });

  // Item 1 (structured output on translated chat) and 13 (the simulator's structured output).
  it.skipIf(pending('item-1', 'item-13'))('generateObject on openai.chat(claude-sonnet-4-5): json_schema through the messages translation', async () => {
    const before = await adminUsage(g);
    const { object, usage } = await generateObject({ model: openai.chat('claude-sonnet-4-5'), schema: z.object({ city: z.string(), celsius: z.number() }), prompt: 'Weather in Paris as JSON' });
    expect(object).toEqual({ city: expect.any(String), celsius: expect.any(Number) });
    const [row] = await newRows(g, before);
    expect(row).toMatchObject({ model: 'claude-sonnet-4-5', details: { input: usage.inputTokens, output: usage.outputTokens } });
  });

  // Item 2: a Claude model on /v1/responses, the AI SDK's default provider call.
  it.skipIf(pending('item-2'))('openai(claude-sonnet-4-5) on the responses API: text, stream, tool round trip, usage billed', async () => {
    const before = await adminUsage(g);
    const json = await generateText({ model: openai('claude-sonnet-4-5'), prompt: 'Hello responses' });
    expect(json.text).toMatch(/\S/);
    const [row] = await newRows(g, before);
    expect(row).toMatchObject({ model: 'claude-sonnet-4-5', details: { input: json.usage.inputTokens, output: json.usage.outputTokens } });
    expect(row!.amount_usd).toBe(tokenChargeUsd('claude-sonnet-4-5', { input: json.usage.inputTokens!, output: json.usage.outputTokens! }));
    const streamed = streamText({ model: openai('claude-sonnet-4-5'), prompt: 'Hello responses' });
    let text = '';
    for await (const delta of streamed.textStream) text += delta;
    expect(text).toBe(json.text);
    const tools = await generateText({ model: openai('claude-sonnet-4-5'), prompt: 'Weather in Paris?', tools: { get_weather: weather }, stopWhen: stepCountIs(3) });
    expect(tools.steps.flatMap((s) => s.toolCalls).map((c) => c.toolName)).toEqual(['get_weather']);
    expect(tools.steps.length).toBe(2);
  });

  // Item 6: the AI SDK sends no voice unless told; the gateway takes its default voice for the model.
  it.skipIf(pending('item-6'))('experimental_generateSpeech on tts-1 with the default voice, and gpt-4o-mini-tts with alloy', async () => {
    const plain = await experimental_generateSpeech({ model: openai.speech('tts-1'), text: 'Hello from the gateway' });
    expect(plain.audio.uint8Array.byteLength).toBeGreaterThan(0);
    const voiced = await experimental_generateSpeech({ model: openai.speech('gpt-4o-mini-tts'), text: 'Hello', voice: 'alloy' });
    expect(voiced.audio.mediaType).toMatch(/^audio\//);
  });

  it('generateImage on dall-e-3 (1024x1024): one image, one $0.04 row', async () => {
    const before = await adminUsage(g);
    const { images } = await generateImage({ model: openai.image('dall-e-3'), prompt: 'a lighthouse', size: '1024x1024' });
    expect(images).toHaveLength(1);
    expect(images[0]!.uint8Array.byteLength).toBeGreaterThan(0);
    const [row, ...more] = await newRows(g, before);
    expect(more).toEqual([]);
    expect(row).toMatchObject({ model: 'dall-e-3', unit: 'image', quantity: 1, amount_usd: '0.04' });
  });

  it('experimental_transcribe on whisper-1: the text, billed by the started second', async () => {
    const before = await adminUsage(g);
    const result = await experimental_transcribe({ model: openai.transcription('whisper-1'), audio: wavOfTenths(25) });
    expect(result.text).toMatch(/\S/);
    const [row] = await newRows(g, before);
    expect(row).toMatchObject({ model: 'whisper-1', unit: 'second', quantity: 3 });
  });

  it('generateImage on gpt-image-1, transcribe on gpt-4o-mini-transcribe, speech on an ElevenLabs model with its voice', async () => {
    const before = await adminUsage(g);
    const { images } = await generateImage({ model: openai.image('gpt-image-1'), prompt: 'a lighthouse', providerOptions: { openai: { quality: 'low' } } });
    expect(images).toHaveLength(1);
    const transcript = await experimental_transcribe({ model: openai.transcription('gpt-4o-mini-transcribe'), audio: wavOfTenths(10) });
    expect(transcript.text).toMatch(/\S/);
    const speech = await experimental_generateSpeech({ model: openai.speech('eleven_multilingual_v2'), text: 'Hello', voice: 'george' });
    expect(speech.audio.mediaType).toBe('audio/mpeg');
    const rows = await newRows(g, before);
    expect(rows.map((r) => [r.model, r.unit])).toEqual([['eleven_multilingual_v2', 'character'], ['gpt-4o-mini-transcribe', 'token'], ['gpt-image-1', 'token']]);
  });

  // Item 8: dall-e-3 priced variants (size and quality).
  it.skipIf(pending('item-8'))('generateImage on dall-e-3 hd 1792x1024 bills that variant ($0.12)', async () => {
    const before = await adminUsage(g);
    const { images } = await generateImage({ model: openai.image('dall-e-3'), prompt: 'a lighthouse', size: '1792x1024', providerOptions: { openai: { quality: 'hd' } } });
    expect(images).toHaveLength(1);
    const [row] = await newRows(g, before);
    expect(row).toMatchObject({ model: 'dall-e-3', amount_usd: '0.12' });
  });
});
