/** Usage edge cases of the messages passthrough that golden streams from a healthy upstream do not show. */
import { describe, expect, it } from 'vitest';
import { createAnthropicMessagesToAnthropicMessages, normalizeMessagesUsage } from '../../../src/translate/anthropic-messages--anthropic-messages/index.js';
import { SseParser } from '../../../src/translate/sse.js';

const sse = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

describe('messages passthrough usage', () => {
  it('treats a 0/0 message_start as unreported and fills message_delta.usage for the client', () => {
    const stream = createAnthropicMessagesToAnthropicMessages({}, { params: {} }).stream('claude-haiku-4-5');
    const events = new SseParser().push([
      sse('message_start', { message: { id: 'msg_1', model: 'claude-haiku-4-5-20251001', content: [], usage: { input_tokens: 0, output_tokens: 0 } } }),
      sse('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      sse('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'hello world' } }),
      sse('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null } }),
      sse('message_stop', {}),
    ].join(''));
    const frames = events.flatMap((e) => stream.push(e).frames);
    expect(stream.usage()).toBeNull();
    const delta = frames.map((f) => JSON.parse(new SseParser().push(f)[0]!.data) as { type: string; usage?: unknown }).find((e) => e.type === 'message_delta');
    expect(delta?.usage).toEqual({ output_tokens: 2 });
    expect(stream.deliveredText()).toBe('hello world');
  });

  it('never sums cumulative message_delta usage', () => {
    const stream = createAnthropicMessagesToAnthropicMessages({}, { params: {} }).stream('m');
    for (const event of new SseParser().push([
      sse('message_start', { message: { usage: { input_tokens: 10, output_tokens: 1 } } }),
      sse('message_delta', { delta: {}, usage: { output_tokens: 5 } }),
      sse('message_delta', { delta: {}, usage: { output_tokens: 9 } }),
    ].join(''))) stream.push(event);
    expect(stream.usage()).toMatchObject({ input: 10, output: 9 });
  });

  it('counts cache tokens into input (the vendor excludes them) and reads web searches', () => {
    expect(normalizeMessagesUsage({ input_tokens: 5, cache_creation_input_tokens: 100, cache_read_input_tokens: 50, output_tokens: 7, server_tool_use: { web_search_requests: 3 } }))
      .toEqual({ input: 155, output: 7, cachedInput: 50, cacheWrite: 100, reasoning: 0, toolCalls: { web_search: 3 } });
  });
});
