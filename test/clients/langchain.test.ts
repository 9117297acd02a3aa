/**
 * LangChain (@langchain/core 1.4, @langchain/openai 1.5, @langchain/anthropic 1.5, @langchain/cohere 1.0:
 * the newest that run on Node 20) against a real gateway, unchanged, over real HTTP: ChatOpenAI on
 * chat completions (OpenAI and Claude models), ChatAnthropic on messages, OpenAIEmbeddings and
 * CohereRerank. The usage each reports is the usage row's (admin API).
 */
import { ChatAnthropic } from '@langchain/anthropic';
import { CohereRerank } from '@langchain/cohere';
import { Document } from '@langchain/core/documents';
import { HumanMessage, SystemMessage, type AIMessageChunk } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { adminUsage, lastUpstream, newRows, startClientsGateway, tokenChargeUsd, type ClientsGateway } from './harness.js';
import { pending } from './pending.js';

// CohereRerank has no base URL option, only `client`: LangChain's own cohere-ai (7, nested under
// @langchain/cohere; the root's cohere-ai is 8) built with the gateway's origin as its environment.
type RerankClient = NonNullable<NonNullable<ConstructorParameters<typeof CohereRerank>[0]>['client']>;
const fromLangChainCohere = createRequire(createRequire(import.meta.url).resolve('@langchain/cohere'));
const { CohereClient } = fromLangChainCohere('cohere-ai') as { CohereClient: new (options: { token: string; environment: string }) => RerankClient };

describe('LangChain against the gateway', () => {
  let g: ClientsGateway;
  beforeAll(async () => { g = await startClientsGateway(); });
  afterAll(async () => { await g?.dispose(); });

  // README "Clients": ChatOpenAI and OpenAIEmbeddings take .../v1 in `configuration.baseURL`;
  // ChatAnthropic's `anthropicApiUrl` is the bare origin.
  const chat = (model: string, maxTokens?: number): ChatOpenAI => new ChatOpenAI({ model, apiKey: g.account.key, configuration: { baseURL: `${g.url}/v1` }, maxTokens, maxRetries: 0 });
  const claude = (model: string): ChatAnthropic => new ChatAnthropic({ model, apiKey: g.account.key, anthropicApiUrl: g.url, maxTokens: 64, maxRetries: 0 });

  const getWeather = tool(async ({ city }) => `21 degrees in ${city}`, {
    name: 'get_weather', description: 'Current weather of a city', schema: z.object({ city: z.string() }),
  });

  it('ChatOpenAI: invoke and stream on gpt-4o-mini, usage_metadata equals the rows', async () => {
    const before = await adminUsage(g);
    const message = await chat('gpt-4o-mini').invoke('Say hello');
    expect(message.content).toMatch(/\S/);
    let streamed: AIMessageChunk | undefined;
    for await (const chunk of await chat('gpt-4o-mini').stream('Say hello')) streamed = streamed ? streamed.concat(chunk) : chunk;
    expect(streamed!.content).toBe(message.content);
    const [streamRow, jsonRow, ...more] = await newRows(g, before);
    expect(more).toEqual([]);
    for (const [row, usage] of [[jsonRow, message.usage_metadata], [streamRow, streamed!.usage_metadata]] as const) {
      expect(row).toMatchObject({ model: 'gpt-4o-mini', details: { input: usage!.input_tokens, output: usage!.output_tokens } });
      expect(row!.amount_usd).toBe(tokenChargeUsd('gpt-4o-mini', { input: usage!.input_tokens, output: usage!.output_tokens }));
    }
  });

  it('ChatOpenAI: bindTools returns the tool call, and the tool result gets an answer', async () => {
    const model = chat('gpt-4o-mini').bindTools([getWeather]);
    const first = await model.invoke('Weather in Paris?');
    expect(first.tool_calls?.map((c) => [c.name, c.args])).toEqual([['get_weather', { city: 'sim' }]]);
    const result = await getWeather.invoke(first.tool_calls![0]!);
    const second = await model.invoke([{ role: 'user', content: 'Weather in Paris?' }, first, result]);
    expect(second.content).toMatch(/\S/);
    expect((await lastUpstream(g)).body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: first.tool_calls![0]!.id, content: '21 degrees in sim' });
  });

  it('ChatOpenAI on a Claude model (chat completions translated to messages): invoke, stream and tools', async () => {
    const before = await adminUsage(g);
    const message = await chat('claude-haiku-4-5', 64).invoke('Hello Claude');
    expect(message.content).toMatch(/\S/);
    const last = await lastUpstream(g);
    expect([last.path, last.body.model, last.body.max_tokens]).toEqual(['/v1/messages', 'claude-haiku-4-5-20251001', 64]);
    const [row] = await newRows(g, before);
    expect(row).toMatchObject({ model: 'claude-haiku-4-5', details: { input: message.usage_metadata!.input_tokens, output: message.usage_metadata!.output_tokens } });
    let streamed: AIMessageChunk | undefined;
    for await (const chunk of await chat('claude-haiku-4-5', 64).stream('Hello Claude')) streamed = streamed ? streamed.concat(chunk) : chunk;
    expect(streamed!.usage_metadata!.output_tokens).toBeGreaterThan(0);
    const called = await chat('claude-sonnet-4-5').bindTools([getWeather]).invoke('Weather in Paris?');
    expect(called.tool_calls?.map((c) => [c.name, c.args])).toEqual([['get_weather', { city: 'sim' }]]);
  });

  it('ChatAnthropic (anthropicApiUrl: the bare origin): invoke, stream and tools on claude-sonnet-4-5, billed as reported', async () => {
    const before = await adminUsage(g);
    const message = await claude('claude-sonnet-4-5').invoke('Hello Claude');
    expect(message.content).toMatch(/\S/);
    expect((await lastUpstream(g)).path).toBe('/v1/messages');
    let streamed: AIMessageChunk | undefined;
    for await (const chunk of await claude('claude-sonnet-4-5').stream('Hello Claude')) streamed = streamed ? streamed.concat(chunk) : chunk;
    expect(streamed!.content).toBe(message.content);
    const [streamRow, jsonRow] = await newRows(g, before);
    const usage = message.usage_metadata!;
    expect(jsonRow).toMatchObject({ model: 'claude-sonnet-4-5', details: { input: usage.input_tokens, output: usage.output_tokens } });
    expect(jsonRow!.amount_usd).toBe(tokenChargeUsd('claude-sonnet-4-5', { input: usage.input_tokens, output: usage.output_tokens }));
    expect(streamRow!.details).toEqual(jsonRow!.details);
    expect(streamRow!.amount_usd).toBe(jsonRow!.amount_usd);
    // A library quirk, not the gateway's: ChatAnthropic adds message_start's output_tokens (1, as the
    // vendor sends it) to message_delta's, which is already the cumulative count (the one billed).
    expect(streamed!.usage_metadata!.input_tokens).toBe(usage.input_tokens);
    expect(streamed!.usage_metadata!.output_tokens).toBe(usage.output_tokens + 1);
    const called = await claude('claude-sonnet-4-5').bindTools([getWeather]).invoke('Weather in Paris?');
    expect(called.tool_calls?.map((c) => [c.name, c.args])).toEqual([['get_weather', { city: 'sim' }]]);
  });

  it('ChatOpenAI with useResponsesApi: gpt-4o (passthrough) and gpt-4o-mini (translated), usage billed', async () => {
    for (const model of ['gpt-4o', 'gpt-4o-mini']) {
      const before = await adminUsage(g);
      const message = await new ChatOpenAI({ model, apiKey: g.account.key, configuration: { baseURL: `${g.url}/v1` }, useResponsesApi: true, maxRetries: 0 }).invoke('Hello responses');
      expect(message.content, model).toBeTruthy();
      const [row] = await newRows(g, before);
      expect(row, model).toMatchObject({ model, details: { input: message.usage_metadata!.input_tokens, output: message.usage_metadata!.output_tokens } });
    }
  });

  it('streamed tool calls: ChatAnthropic and ChatOpenAI on claude-sonnet-4-5 stream the call in chunks', async () => {
    for (const model of [claude('claude-sonnet-4-5'), chat('claude-sonnet-4-5', 64)]) {
      let merged: AIMessageChunk | undefined;
      for await (const chunk of await model.bindTools([getWeather]).stream('Weather in Paris?')) merged = merged ? merged.concat(chunk) : chunk;
      expect(merged!.tool_calls?.map((c) => [c.name, c.args])).toEqual([['get_weather', { city: 'sim' }]]);
    }
  });

  it('ChatAnthropic with cache_control: input_token_details match the row, cache writes and reads priced at their rates', async () => {
    const system = new SystemMessage({ content: [{ type: 'text', text: `You are a cached assistant. ${'Context. '.repeat(300)}`, cache_control: { type: 'ephemeral' } }] });
    for (const expected of ['write', 'read'] as const) {
      const before = await adminUsage(g);
      const message = await claude('claude-sonnet-4-5').invoke([system, new HumanMessage('one')]);
      const usage = message.usage_metadata!;
      const cached = usage.input_token_details?.cache_read ?? 0;
      const written = usage.input_token_details?.cache_creation ?? 0;
      expect(expected === 'write' ? written : cached, expected).toBeGreaterThan(0);
      const [row] = await newRows(g, before);
      expect(row!.details).toMatchObject({ input: usage.input_tokens, output: usage.output_tokens, cached, cache_write: written });
      expect(row!.amount_usd).toBe(tokenChargeUsd('claude-sonnet-4-5', { input: usage.input_tokens, output: usage.output_tokens, cached, cacheWrite: written }));
    }
  });

  it('OpenAIEmbeddings: embedQuery and embedDocuments, billed per input token', async () => {
    const before = await adminUsage(g);
    const embeddings = new OpenAIEmbeddings({ model: 'text-embedding-3-small', apiKey: g.account.key, configuration: { baseURL: `${g.url}/v1` }, maxRetries: 0 });
    const query = await embeddings.embedQuery('sunny day');
    const docs = await embeddings.embedDocuments(['sunny day', 'rainy night']);
    expect(query).toHaveLength(1536);
    expect(docs.map((d) => d.length)).toEqual([1536, 1536]);
    expect(docs[0]).toEqual(query);
    const rows = await newRows(g, before);
    expect(rows.map((r) => [r.kind, r.model])).toEqual([['embeddings', 'text-embedding-3-small'], ['embeddings', 'text-embedding-3-small']]);
    expect(rows.every((r) => r.quantity > 0)).toBe(true);
  });

  // Item 11: CohereRerank calls the v1 client's rerank with `max_chunks_per_doc: null` (its unset maxChunksPerDoc); /v1/rerank
  // answers 400 "Unknown parameter: 'max_chunks_per_doc'." today.
  it.skipIf(pending('item-11'))('CohereRerank with a CohereClient on the gateway (environment: the bare origin): POST /v1/rerank, one search billed', async () => {
    const before = await adminUsage(g);
    const reranker = new CohereRerank({ model: 'rerank-pro', topN: 2, client: new CohereClient({ token: g.account.key, environment: g.url }) });
    const docs = [new Document({ pageContent: 'Bananas are yellow.' }), new Document({ pageContent: 'Paris is the capital of France.' }), new Document({ pageContent: 'Berlin is in Germany.' })];
    const ranked = await reranker.rerank(docs, 'capital of France');
    expect(ranked).toHaveLength(2);
    expect(ranked[0]!.relevanceScore).toBeGreaterThanOrEqual(ranked[1]!.relevanceScore);
    const compressed = await reranker.compressDocuments(docs, 'capital of France');
    expect(compressed.map((d) => d.pageContent)).toEqual(ranked.map((r) => docs[r.index]!.pageContent));
    expect(compressed[0]!.metadata.relevanceScore).toBe(ranked[0]!.relevanceScore);
    const rows = await newRows(g, before);
    expect(rows.map((r) => [r.kind, r.model, r.quantity, r.amount_usd])).toEqual([['rerank', 'rerank-pro', 1, '0.002'], ['rerank', 'rerank-pro', 1, '0.002']]);
  });

  // Item 4: Cohere's own model name is an alias of rerank-pro.
  it.skipIf(pending('item-4', 'item-11'))('CohereRerank with the vendor model name rerank-v3.5 (an alias)', async () => {
    const reranker = new CohereRerank({ model: 'rerank-v3.5', topN: 1, client: new CohereClient({ token: g.account.key, environment: g.url }) });
    expect(await reranker.rerank(['Paris is in France.', 'Bananas'], 'France')).toHaveLength(1);
  });

  // Item 13: the simulator answers json_schema with JSON that fits the schema.
  it.skipIf(pending('item-13'))('withStructuredOutput on gpt-4o-mini (jsonSchema and jsonMode)', async () => {
    const schema = z.object({ city: z.string(), celsius: z.number() });
    const strict = await chat('gpt-4o-mini').withStructuredOutput(schema, { method: 'jsonSchema' }).invoke('Weather in Paris as JSON');
    expect(strict).toEqual({ city: expect.any(String), celsius: expect.any(Number) });
    const loose = await chat('gpt-4o-mini').withStructuredOutput(schema, { method: 'jsonMode' }).invoke('Weather in Paris as JSON with keys city and celsius');
    expect(loose).toEqual({ city: expect.any(String), celsius: expect.any(Number) });
  });

  // Item 1: response_format json_schema / json_object on a Claude model through chat completions.
  it.skipIf(pending('item-1', 'item-13'))('withStructuredOutput on claude-sonnet-4-5 through ChatOpenAI (jsonSchema and jsonMode)', async () => {
    const schema = z.object({ city: z.string(), celsius: z.number() });
    const before = await adminUsage(g);
    const strict = await chat('claude-sonnet-4-5').withStructuredOutput(schema, { method: 'jsonSchema' }).invoke('Weather in Paris as JSON');
    expect(strict).toEqual({ city: expect.any(String), celsius: expect.any(Number) });
    const loose = await chat('claude-sonnet-4-5').withStructuredOutput(schema, { method: 'jsonMode' }).invoke('Weather in Paris as JSON with keys city and celsius');
    expect(loose).toEqual({ city: expect.any(String), celsius: expect.any(Number) });
    expect((await newRows(g, before)).map((r) => r.model)).toEqual(['claude-sonnet-4-5', 'claude-sonnet-4-5']);
  });
});
