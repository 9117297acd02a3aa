/**
 * openai-chat--anthropic-messages beyond the golden fixtures: refusals (which the fixture runner has
 * no slot for), error events mid-stream, and streams that break the usual event order.
 * (Lives in a case folder because the golden runner reads every entry of the pair folder as a case.)
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CompiledOffering } from '../../../src/config/types.js';
import { GatewayError } from '../../../src/errors.js';
import { createOpenaiChatToAnthropicMessages } from '../../../src/translate/openai-chat--anthropic-messages/index.js';
import type { SseEvent } from '../../../src/translate/sse.js';
import type { StreamTranslator } from '../../../src/translate/types.js';

const offering = { id: 'claude-haiku-4-5', upstreamModel: 'claude-haiku-4-5-20251001' } as CompiledOffering;
const base = { model: 'claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] };
const params = { params: {} };

function translate(body: Record<string, unknown>): Record<string, unknown> {
  return createOpenaiChatToAnthropicMessages(body, params).request(body, offering) as Record<string, unknown>;
}

function caught(fn: () => unknown): GatewayError {
  try { fn(); } catch (error) { if (error instanceof GatewayError) return error; throw error; }
  throw new Error('expected a GatewayError');
}

function ev(data: Record<string, unknown>): SseEvent {
  return { event: data.type as string, data: JSON.stringify(data) };
}

function frames(stream: StreamTranslator, events: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const e of events) {
    for (const f of stream.push(ev(e)).frames) out.push(JSON.parse(f.replace(/^data: /, '')) as Record<string, unknown>);
  }
  return out;
}

const messageStart = { type: 'message_start', message: { id: 'msg_1', usage: { input_tokens: 7, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } } };

beforeAll(() => { vi.useFakeTimers({ now: 1_700_000_000_000, toFake: ['Date'] }); });
afterAll(() => { vi.useRealTimers(); });

describe('parameters', () => {
  it.each([
    ['logit_bias', { logit_bias: { '50256': -100 } }],
    ['logprobs', { logprobs: true }],
    ['top_logprobs', { top_logprobs: 3 }],
    ['n', { n: 2 }],
    ['presence_penalty', { presence_penalty: 0.5 }],
    ['frequency_penalty', { frequency_penalty: -1 }],
    ['seed', { seed: 42 }],
    ['response_format', { response_format: { type: 'json_object' } }],
    ['audio', { audio: { voice: 'alloy', format: 'mp3' } }],
    ['modalities', { modalities: ['text', 'audio'] }],
    ['reasoning_effort', { reasoning_effort: 'high' }],
    ['functions', { functions: [{ name: 'f' }] }],
    ['temperature', { temperature: 1.5 }],
    ['some_future_param', { some_future_param: true }],
  ])('refuses %s, naming it', (param, extra) => {
    const error = caught(() => createOpenaiChatToAnthropicMessages({ ...base, ...extra }, params));
    expect(error.code).toBe('unsupported_parameter');
    expect(error.status).toBe(400);
    expect(error.extra.param).toBe(param);
    expect(error.message).toContain(param);
  });

  it('says why a temperature above 1 is refused instead of clamping it', () => {
    expect(caught(() => translate({ ...base, temperature: 2 })).message).toMatch(/0 to 1.*2 was sent/);
    expect(translate({ ...base, temperature: 1 }).temperature).toBe(1);
  });

  it('accepts values that ask for nothing, and treats null as absent', () => {
    const body = { ...base, top_p: 1, n: 1, logprobs: false, presence_penalty: 0, frequency_penalty: 0, response_format: { type: 'text' }, modalities: ['text'], store: false, seed: null, logit_bias: null, stream_options: { include_usage: true } };
    expect(translate(body)).toEqual({ model: 'claude-haiku-4-5-20251001', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] });
  });

  it('requires max_tokens (the route default normally fills it)', () => {
    const error = caught(() => translate({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
    expect(error).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(error.extra.param).toBe('max_tokens');
  });

  it('maps user and safety_identifier to metadata.user_id, refusing two different ids', () => {
    expect(translate({ ...base, safety_identifier: 'h1' }).metadata).toEqual({ user_id: 'h1' });
    expect(caught(() => translate({ ...base, user: 'a', safety_identifier: 'b' })).extra.param).toBe('user');
  });
});

describe('response_format (issue 31 item 1)', () => {
  const capable = { ...offering, structuredOutput: true } as CompiledOffering;
  const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
  const jsonSchema = { response_format: { type: 'json_schema', json_schema: { name: 'w', strict: true, schema } } };
  const create = (extra: Record<string, unknown>, on: CompiledOffering | undefined = capable) =>
    createOpenaiChatToAnthropicMessages({ ...base, ...extra }, { params: {}, offering: on });

  it('is refused, naming the model, where the offering does not declare structured_output', () => {
    for (const extra of [jsonSchema, { response_format: { type: 'json_object' } }]) {
      const error = caught(() => create(extra, { ...offering, structuredOutput: false } as CompiledOffering));
      expect([error.code, error.status, error.extra.param]).toEqual(['unsupported_parameter', 400, 'response_format']);
      expect(error.message).toContain('model "claude-haiku-4-5" does not take structured output');
    }
  });

  it('refuses, before anything is sent, a schema the vendor would refuse, an unknown type, and json_object with tools', () => {
    const bounded = { response_format: { type: 'json_schema', json_schema: { name: 'w', schema: { ...schema, properties: { n: { type: 'integer', minimum: 1 } } } } } };
    expect(caught(() => create(bounded)).message).toContain('schema.properties.n uses "minimum"');
    expect(caught(() => create({ response_format: { type: 'json_schema', json_schema: { name: 'w' } } })).message).toContain('json_schema.schema');
    expect(caught(() => create({ response_format: { type: 'yaml' } })).extra.param).toBe('response_format');
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    expect(caught(() => create({ response_format: { type: 'json_object' }, tools })).message).toContain('json_object cannot be combined with "tools"');
  });

  it('carries json_schema as output_config.format, next to tools', () => {
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }];
    const body = { ...base, ...jsonSchema, tools };
    const out = createOpenaiChatToAnthropicMessages(body, { params: {}, offering: capable }).request(body, capable) as Record<string, unknown>;
    expect(out.output_config).toEqual({ format: { type: 'json_schema', schema } });
    expect(out.tools).toEqual([{ name: 'f', input_schema: { type: 'object' } }]);
  });

  it('answers json_object through the forced tool: its input is the content, JSON and stream, and only that tool is read so', () => {
    const translator = create({ response_format: { type: 'json_object' } });
    const answer = translator.response({ id: 'msg_1', content: [{ type: 'tool_use', id: 't', name: 'json_object', input: { a: 1 } }], stop_reason: 'max_tokens', usage: { input_tokens: 5, output_tokens: 3 } }, 'claude-haiku-4-5');
    expect((answer.body.choices as Array<Record<string, unknown>>)[0]).toMatchObject({ message: { content: '{"a":1}' }, finish_reason: 'length' });
    expect(answer.outputText).toBe('{"a":1}');
    // Without json_object a tool named json_object is an ordinary tool call.
    const plain = createOpenaiChatToAnthropicMessages(base, params).response({ id: 'msg_2', content: [{ type: 'tool_use', id: 't', name: 'json_object', input: {} }], stop_reason: 'tool_use', usage: { input_tokens: 5, output_tokens: 3 } }, 'm');
    expect((plain.body.choices as Array<Record<string, unknown>>)[0]).toMatchObject({ message: { content: null, tool_calls: [{ function: { name: 'json_object' } }] }, finish_reason: 'tool_calls' });
    const stream = translator.stream('claude-haiku-4-5');
    const out = frames(stream, [
      messageStart,
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'json_object', input: { whole: true } } },
      { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 4 } },
    ]);
    expect(out.map((c) => (c.choices as Array<Record<string, unknown>>)[0])).toEqual([
      { index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null },
      { index: 0, delta: { content: '{"whole":true}' }, logprobs: null, finish_reason: null },
      { index: 0, delta: {}, logprobs: null, finish_reason: 'stop' },
    ]);
  });
});

describe('messages', () => {
  it.each([
    ['messages[0].content[1]', { role: 'user', content: [{ type: 'text', text: 'x' }, { type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }] }],
    ['messages[0].content[0].image_url.detail', { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://e.com/a.png', detail: 'low' } }] }],
    ['messages[0].content[0].image_url', { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,AA' } }] }],
    ['messages[0].content[0].file.file_id', { role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }],
    ['messages[0].name', { role: 'user', content: 'hi', name: 'alice' }],
    ['messages[0].role', { role: 'function', name: 'f', content: '1' }],
    ['messages[0].tool_calls[0].type', { role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'x', input: 'y' } }] }],
  ])('refuses %s', (param, message) => {
    const error = caught(() => translate({ ...base, messages: [message] }));
    expect(error.code).toBe('unsupported_parameter');
    expect(error.extra.param).toBe(param);
  });

  it('refuses invalid tool-call arguments and unknown roles as invalid requests', () => {
    const bad = { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":' } }] };
    const error = caught(() => translate({ ...base, messages: [{ role: 'user', content: 'x' }, bad] }));
    expect(error).toMatchObject({ code: 'invalid_request', status: 400 });
    expect(error.extra.param).toBe('messages[1].tool_calls[0].function.arguments');
    expect(caught(() => translate({ ...base, messages: [{ role: 'robot', content: 'x' }] })).code).toBe('invalid_request');
  });

  it('merges consecutive same-role messages and reads PDF file parts', () => {
    const out = translate({ ...base, messages: [
      { role: 'user', content: 'a' },
      { role: 'user', content: [{ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBER', filename: 'r.pdf' } }] },
      { role: 'assistant', content: 'b' },
      { role: 'assistant', content: '', tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '' } }] },
    ] });
    expect(out.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' }, title: 'r.pdf' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'b' }, { type: 'tool_use', id: 't1', name: 'f', input: {} }] },
    ]);
  });

  it('maps every tool_choice', () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    const choice = (extra: Record<string, unknown>): unknown => translate({ ...base, tools, ...extra }).tool_choice;
    expect(choice({ tool_choice: 'none' })).toEqual({ type: 'none' });
    expect(choice({ tool_choice: 'auto' })).toEqual({ type: 'auto' });
    expect(choice({})).toBeUndefined();
    expect(choice({ parallel_tool_calls: false })).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(choice({ tool_choice: 'required', parallel_tool_calls: true })).toEqual({ type: 'any' });
    expect(choice({ tool_choice: { type: 'function', function: { name: 'f' } }, parallel_tool_calls: false })).toEqual({ type: 'tool', name: 'f', disable_parallel_tool_use: true });
    expect(caught(() => choice({ tool_choice: { type: 'allowed_tools', allowed_tools: {} } })).code).toBe('unsupported_parameter');
    expect(translate({ ...base, tool_choice: 'none' }).tool_choice).toBeUndefined();
    expect(caught(() => translate({ ...base, tool_choice: 'required' })).code).toBe('invalid_request');
  });
});

describe('answers', () => {
  it('maps refusal to content_filter and counts web searches as tool calls', () => {
    const translator = createOpenaiChatToAnthropicMessages(base, params);
    const result = translator.response({ id: 'msg_9', content: [{ type: 'text', text: 'No.' }], stop_reason: 'refusal', usage: { input_tokens: 3, output_tokens: 2, server_tool_use: { web_search_requests: 2 } } }, 'claude-haiku-4-5');
    expect(result.body).toMatchObject({ id: 'msg_9', created: 1_700_000_000, choices: [{ finish_reason: 'content_filter', message: { content: 'No.' } }] });
    expect(result.usage).toEqual({ input: 3, output: 2, cachedInput: 0, cacheWrite: 0, reasoning: 0, toolCalls: { web_search: 2 } });
    expect(result.outputText).toBe('No.');
  });

  it('maps upstream error answers; 529 is an overloaded upstream', () => {
    const { error } = createOpenaiChatToAnthropicMessages(base, params);
    expect(error(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, {})).toMatchObject({ code: 'upstream_error', status: 502, message: 'The upstream provider is overloaded.' });
    expect(error(400, { type: 'error', error: { type: 'invalid_request_error', message: 'messages: roles must alternate' } }, {})).toMatchObject({ code: 'invalid_request', status: 400, message: 'messages: roles must alternate' });
    expect(error(429, { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }, { 'retry-after': '5' }).extra.headers).toEqual({ 'retry-after': '5' });
  });
});

describe('streams', () => {
  it('ends on an error event with a GatewayError, after pings and text', () => {
    const stream = createOpenaiChatToAnthropicMessages({ ...base, stream: true }, params).stream('claude-haiku-4-5');
    expect(frames(stream, [messageStart, { type: 'ping' }, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } }])).toHaveLength(2);
    const step = stream.push(ev({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }));
    expect(step.frames).toEqual([]);
    expect(step.done).toBeUndefined();
    expect(step.error).toMatchObject({ code: 'upstream_error', status: 502, message: 'The upstream provider is overloaded.' });
    expect(stream.push(ev({ type: 'message_stop' }))).toEqual({ frames: [] });
    expect(stream.deliveredText()).toBe('Hi');
    expect(stream.usage()).toEqual({ input: 7, output: 1, cachedInput: 0, cacheWrite: 0, reasoning: 0 });

    const other = createOpenaiChatToAnthropicMessages(base, params).stream('m');
    expect(other.push(ev({ type: 'error', error: { type: 'api_error', message: 'Internal server error' } })).error).toMatchObject({ code: 'upstream_error', message: 'Internal server error' });
    expect(other.push({ data: '{not json' })).toEqual({ frames: [] });
    expect(createOpenaiChatToAnthropicMessages(base, params).stream('m').push({ data: '{not json' }).error?.code).toBe('upstream_error');
  });

  it('survives a tool-call block before message_start, with no usage until message_start', () => {
    const stream = createOpenaiChatToAnthropicMessages({ ...base, stream: true, stream_options: { include_usage: true } }, params).stream('claude-haiku-4-5');
    const early = frames(stream, [
      { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"a":1}' } },
    ]);
    expect(early.map((c) => (c.choices as Array<{ delta: unknown }>)[0]!.delta)).toEqual([
      { role: 'assistant', content: '' },
      { tool_calls: [{ index: 0, id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] },
    ]);
    expect(stream.usage()).toBeNull();
    const late = frames(stream, [messageStart, { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 9 } }, { type: 'message_stop' }]);
    expect(new Set([...early, ...late].map((c) => c.id)).size).toBe(1);
    expect(late.map((c) => c.choices)).toEqual([[{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }], []]);
    expect(stream.usage()).toEqual({ input: 7, output: 9, cachedInput: 0, cacheWrite: 0, reasoning: 0 });
    expect(stream.deliveredText()).toBe('f{"a":1}');
  });

  it('reports no usage chunk and no usage when message_start never came', () => {
    const stream = createOpenaiChatToAnthropicMessages({ ...base, stream: true, stream_options: { include_usage: true } }, params).stream('m');
    const out = frames(stream, [{ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'x' } }, { type: 'message_stop' }]);
    expect(out.map((c) => (c.choices as Array<{ finish_reason: unknown }>)[0]?.finish_reason)).toEqual([null, null, 'stop']);
    expect(stream.usage()).toBeNull();
  });
});
