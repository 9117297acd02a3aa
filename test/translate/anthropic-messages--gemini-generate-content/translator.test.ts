/**
 * anthropic-messages--gemini-generate-content beyond the golden fixtures: refusals, tool results
 * naming their call (errors included), thinking, structured output, and the stream's block order.
 */
import { describe, expect, it } from 'vitest';
import type { CompiledOffering } from '../../../src/config/types.js';
import { GatewayError } from '../../../src/errors.js';
import { createAnthropicMessagesToGeminiGenerateContent } from '../../../src/translate/anthropic-messages--gemini-generate-content/index.js';
import { parseNamedSse } from '../../sim/helpers.js';

const offering = { id: 'google-ai-gemini-2.5-flash', upstreamModel: 'gemini-2.5-flash', structuredOutput: true } as CompiledOffering;
const base = { model: 'google-ai-gemini-2.5-flash', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] };

function translate(body: Record<string, unknown>): Record<string, any> {
  return createAnthropicMessagesToGeminiGenerateContent(body, { params: {}, offering }).request(body, offering) as Record<string, any>;
}

function caught(fn: () => unknown): GatewayError {
  try { fn(); } catch (error) { if (error instanceof GatewayError) return error; throw error; }
  throw new Error('expected a GatewayError');
}

describe('parameters and content', () => {
  it.each([
    ['metadata', { metadata: { user_id: 'u' } }],
    ['container', { container: 'c1' }],
    ['tools[0].type', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] }],
    ['tool_choice.disable_parallel_tool_use', { tools: [{ name: 'f', input_schema: { type: 'object' } }], tool_choice: { type: 'auto', disable_parallel_tool_use: true } }],
    ['thinking', { thinking: { type: 'adaptive' } }],
    ['output_config.effort', { output_config: { effort: 'low' } }],
    ['messages[0].content[0].source', { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] }] }],
    ['messages[1].content[0]', { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }] }] }],
  ])('refuses %s', (param, extra) => {
    const error = caught(() => translate({ ...base, ...extra }));
    expect(error.code).toBe('unsupported_parameter');
    expect(error.extra.param).toBe(param);
  });

  it('carries thinking budgets, a disabled one as 0, and output_config.format as JSON output', () => {
    expect(translate({ ...base, thinking: { type: 'disabled' } }).generationConfig.thinkingConfig).toEqual({ thinkingBudget: 0 });
    const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    expect(translate({ ...base, output_config: { format: { type: 'json_schema', schema } } }).generationConfig).toEqual({ maxOutputTokens: 50, responseMimeType: 'application/json', responseJsonSchema: schema });
  });

  it('a tool result is named after its tool_use; an error result says so; one answering nothing is a 400', () => {
    const messages = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'lookup', input: { q: 'x' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'not found', is_error: true }] },
    ];
    expect(translate({ ...base, messages }).contents[2].parts[0]).toEqual({ functionResponse: { name: 'lookup', response: { error: 'not found' } } });
    const orphan = caught(() => translate({ ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tx', content: 'x' }] }] }));
    expect(orphan.extra.param).toBe('messages[0].content[0].tool_use_id');
    const misplaced = caught(() => translate({ ...base, messages: [{ role: 'user', content: [{ type: 'tool_use', id: 't', name: 'n', input: {} }] }] }));
    expect(misplaced.code).toBe('invalid_request');
  });
});

describe('answers', () => {
  it('a content-filtered answer is a refusal; usage input excludes the cached part', () => {
    const t = createAnthropicMessagesToGeminiGenerateContent(base, { params: {}, offering });
    const answer = t.response({ candidates: [{ content: { parts: [] }, finishReason: 'SAFETY' }], usageMetadata: { promptTokenCount: 100, cachedContentTokenCount: 60, candidatesTokenCount: 0 }, responseId: 'r' }, 'm');
    expect(answer.body).toMatchObject({ stop_reason: 'refusal', content: [], usage: { input_tokens: 40, cache_read_input_tokens: 60, output_tokens: 0 } });
    expect(answer.usage).toMatchObject({ input: 100, cachedInput: 60 });
  });

  it('streams text across chunks into one block, closed before a tool_use, indexes in order', () => {
    const stream = createAnthropicMessagesToGeminiGenerateContent({ ...base, stream: true }, { params: {}, offering }).stream('m');
    const frames: string[] = [];
    const push = (parts: unknown[], finish?: string) => frames.push(...stream.push({ data: JSON.stringify({ candidates: [{ content: { parts }, ...(finish ? { finishReason: finish } : {}) }], usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4 }, responseId: 'r' }) }).frames);
    push([{ text: 'Let ' }]);
    push([{ text: 'me.' }, { functionCall: { name: 'f', args: { a: 1 } } }], 'STOP');
    const events = parseNamedSse(frames.join(''));
    expect(events.map((e) => [e.event, e.data.index ?? null])).toEqual([
      ['message_start', null], ['content_block_start', 0], ['content_block_delta', 0], ['content_block_delta', 0], ['content_block_stop', 0],
      ['content_block_start', 1], ['content_block_delta', 1], ['content_block_stop', 1], ['message_delta', null], ['message_stop', null],
    ]);
    expect(events[8]!.data).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { input_tokens: 3, output_tokens: 4 } });
  });
});
