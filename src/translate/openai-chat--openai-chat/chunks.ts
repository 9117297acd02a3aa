/** Chat-completions answers as the gateway meters them: their usage, and the text they generated. */
import type { TokenUsage } from '../types.js';

/** A chat-completions `usage` object. */
export interface ChatUsage {
  prompt_tokens?: number; completion_tokens?: number;
  /** `cache_write_tokens`: OpenRouter's name for cache writes, which a messages upstream reports through chat. */
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

/** Normalized usage from a chat-completions `usage` object. */
export function readChatUsage(usage: ChatUsage | null | undefined): TokenUsage | null {
  if (!usage || typeof usage.prompt_tokens !== 'number') return null;
  return {
    input: usage.prompt_tokens,
    output: usage.completion_tokens ?? 0,
    cachedInput: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWrite: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** A message, or a stream chunk's delta. */
export interface ChatDelta { content?: string | null; refusal?: string | null; tool_calls?: Array<{ function?: { name?: string; arguments?: string } }> }

/** The generated text of a message or delta: content, refusal, tool names and arguments. */
export function generatedText(part: ChatDelta | undefined, out: { push(...pieces: string[]): unknown }): void {
  if (!part) return;
  if (part.content) out.push(part.content);
  if (part.refusal) out.push(part.refusal);
  for (const call of part.tool_calls ?? []) {
    if (call.function?.name) out.push(call.function.name);
    if (call.function?.arguments) out.push(call.function.arguments);
  }
}
