/** Chat-completions answers as the gateway meters them: their usage, and the text they generated. */
import type { UsageDialect } from '../../config/usage-dialect.js';
import type { TokenUsage } from '../types.js';

/** A chat-completions `usage` object. */
export interface ChatUsage {
  prompt_tokens?: number; completion_tokens?: number;
  /** `cache_write_tokens`: OpenRouter's name for cache writes, which a messages upstream reports through chat. */
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

/**
 * Normalized usage from a chat-completions `usage` object; `dialect` (the operation's `usage:`, issue
 * 32) names the members a compatible vendor reports a count under instead of OpenAI's.
 */
export function readChatUsage(usage: ChatUsage | null | undefined, dialect?: UsageDialect | null): TokenUsage | null {
  if (!usage) return null;
  if (dialect) return readDialectUsage(usage, dialect);
  if (typeof usage.prompt_tokens !== 'number') return null;
  return {
    input: usage.prompt_tokens,
    output: usage.completion_tokens ?? 0,
    cachedInput: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWrite: usage.prompt_tokens_details?.cache_write_tokens ?? 0,
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

/** The count at a JSON Pointer into `value`, or undefined when nothing numeric is there. */
function countAt(value: unknown, pointer: string): number | undefined {
  let at: unknown = value;
  for (const raw of pointer.slice(1).split('/')) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string, unknown>)[raw.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return typeof at === 'number' && Number.isFinite(at) ? at : undefined;
}

function readDialectUsage(usage: ChatUsage, d: UsageDialect): TokenUsage | null {
  const input = countAt(usage, d.input ?? '/prompt_tokens');
  if (input === undefined) return null;
  return {
    input,
    output: countAt(usage, d.output ?? '/completion_tokens') ?? 0,
    cachedInput: countAt(usage, d.cachedInput ?? '/prompt_tokens_details/cached_tokens') ?? 0,
    cacheWrite: 0,
    reasoning: countAt(usage, d.reasoning ?? '/completion_tokens_details/reasoning_tokens') ?? 0,
  };
}

/** A message, or a stream chunk's delta. */
export interface ChatDelta {
  content?: string | null; refusal?: string | null; tool_calls?: Array<{ function?: { name?: string; arguments?: string } }>;
  /** The reasoning text some compatible servers send beside the answer (DeepSeek's reasoner, vLLM's reasoning parsers). */
  reasoning_content?: string | null;
}

/** The generated text of a message or delta: reasoning, content, refusal, tool names and arguments. */
export function generatedText(part: ChatDelta | undefined, out: { push(...pieces: string[]): unknown }): void {
  if (!part) return;
  // Reasoning is output the vendor bills: counted when the gateway must count what was delivered.
  if (part.reasoning_content) out.push(part.reasoning_content);
  if (part.content) out.push(part.content);
  if (part.refusal) out.push(part.refusal);
  for (const call of part.tool_calls ?? []) {
    if (call.function?.name) out.push(call.function.name);
    if (call.function?.arguments) out.push(call.function.arguments);
  }
}
