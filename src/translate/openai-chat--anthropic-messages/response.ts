/**
 * A Messages answer as a `chat.completion`: text blocks joined into `content` (null when the answer
 * is only tool calls), `tool_use` blocks as function `tool_calls`, the stop reason as `finish_reason`,
 * and usage with the cache counters counted in `prompt_tokens`.
 */
import type { TokenUsage } from '../types.js';
import { JSON_OBJECT_TOOL } from './response-format.js';
import { type AnthropicUsage, chatUsage, finishReason, readCounters, tokenUsage } from './usage.js';

interface AnthropicBlock { type?: unknown; text?: unknown; id?: unknown; name?: unknown; input?: unknown }

/** Seconds since the epoch, for `created` (Anthropic answers carry no timestamp). */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/**
 * The chat-completion body, the normalized usage and the generated text. With `jsonObject` (the
 * client asked for response_format json_object, answered by a forced tool: response-format.ts) that
 * tool's input is the content, as JSON text, and its `tool_use` stop is `stop`.
 */
export function toChatCompletion(upstream: Record<string, unknown>, clientModel: string, jsonObject = false): { body: Record<string, unknown>; usage: TokenUsage | null; outputText: string } {
  const blocks = Array.isArray(upstream.content) ? (upstream.content as AnthropicBlock[]) : [];
  const text: string[] = [];
  const generated: string[] = [];
  const toolCalls: Array<Record<string, unknown>> = [];
  for (const block of blocks) {
    if (block.type === 'text' && typeof block.text === 'string') {
      text.push(block.text);
      generated.push(block.text);
    } else if (jsonObject && block.type === 'tool_use' && block.name === JSON_OBJECT_TOOL) {
      const json = JSON.stringify(block.input ?? {});
      text.push(json);
      generated.push(json);
    } else if (block.type === 'tool_use' && typeof block.name === 'string') {
      const args = JSON.stringify(block.input ?? {});
      toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: args } });
      generated.push(block.name, args);
    }
    // Thinking and server-tool blocks are never requested by this translator, so never expected here.
  }
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: text.length > 0 || toolCalls.length === 0 ? text.join('') : null,
    refusal: null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const counters = readCounters(upstream.usage as AnthropicUsage | undefined);
  const body: Record<string, unknown> = {
    id: upstream.id,
    object: 'chat.completion',
    created: nowSeconds(),
    model: clientModel,
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason(jsonObject && upstream.stop_reason === 'tool_use' ? 'end_turn' : upstream.stop_reason) }],
  };
  if (counters) body.usage = chatUsage(counters);
  return { body, usage: counters ? tokenUsage(counters) : null, outputText: generated.join('') };
}
