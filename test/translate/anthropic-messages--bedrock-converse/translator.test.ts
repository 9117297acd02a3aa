/**
 * What anthropic-messages--bedrock-converse refuses (nothing silently dropped): parameters and blocks
 * Converse cannot carry are 400s naming the parameter, before anything is sent; consecutive messages
 * of one role are joined (Bedrock wants turns to alternate); exception events end a stream cleanly.
 */
import { describe, expect, it } from 'vitest';
import { createAnthropicMessagesToBedrockConverse } from '../../../src/translate/anthropic-messages--bedrock-converse/index.js';
import type { CompiledOffering } from '../../../src/config/types.js';

const offering = { upstreamModel: 'us.anthropic.claude-sonnet-4-5-20250929-v1:0' } as CompiledOffering;
const base = { model: 'bedrock-claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] };
const translate = (body: Record<string, unknown>) => createAnthropicMessagesToBedrockConverse(body, { params: {} }).request(body, offering);
const refusal = (body: Record<string, unknown>) => { try { translate(body); return null; } catch (e) { const err = e as { code: string; extra?: { param?: string } }; return { code: err.code, param: err.extra?.param }; } };

describe('anthropic-messages--bedrock-converse refusals', () => {
  it('refuses parameters and blocks Converse cannot carry, naming them', () => {
    expect(refusal({ ...base, top_k: 5 })).toEqual({ code: 'unsupported_parameter', param: 'top_k' });
    expect(refusal({ ...base, thinking: { type: 'enabled', budget_tokens: 1024 } })).toEqual({ code: 'unsupported_parameter', param: 'thinking' });
    expect(refusal({ ...base, tool_choice: { type: 'none' }, tools: [{ name: 't', input_schema: { type: 'object' } }] })).toEqual({ code: 'unsupported_parameter', param: 'tool_choice' });
    expect(refusal({ ...base, tools: [{ type: 'web_search_20250305', name: 'web_search' }] })).toEqual({ code: 'unsupported_parameter', param: 'tools[0].type' });
    expect(refusal({ ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] }] }))
      .toEqual({ code: 'unsupported_parameter', param: 'messages[0].content[0].source' });
    expect(refusal({ ...base, messages: [{ role: 'assistant', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] }] }))
      .toEqual({ code: 'unsupported_parameter', param: 'messages[0].content[0].type' });
  });

  it('joins consecutive messages of one role, and sends no model or stream in the body', () => {
    const body = translate({ ...base, stream: true, messages: [{ role: 'user', content: 'a' }, { role: 'user', content: [{ type: 'text', text: 'b' }] }] }) as Record<string, unknown>;
    expect(body).toEqual({ messages: [{ role: 'user', content: [{ text: 'a' }, { text: 'b' }] }], inferenceConfig: { maxTokens: 10 } });
  });

  it('an exception event ends the stream with a clean upstream_error, nothing after it', () => {
    const stream = createAnthropicMessagesToBedrockConverse(base, { params: {} }).stream('bedrock-claude-sonnet-4-5');
    expect(stream.push({ event: 'messageStart', data: '{"role":"assistant"}' }).frames).toHaveLength(1);
    const step = stream.push({ event: 'exception:throttlingException', data: '{"message":"Too many tokens"}' });
    expect(step.error?.code).toBe('upstream_error');
    expect(step.error?.message).toBe('The upstream provider is throttling requests (throttlingException): Too many tokens');
    expect(stream.push({ event: 'metadata', data: '{"usage":{"inputTokens":1,"outputTokens":1,"totalTokens":2}}' }).frames).toEqual([]);
    expect(stream.usage()).toBeNull();
  });
});
