/**
 * Converse usage (TokenUsage: inputTokens, outputTokens, totalTokens, cacheReadInputTokens,
 * cacheWriteInputTokens) and stop reasons. Like Anthropic's, Bedrock's `inputTokens` EXCLUDES the
 * cache counters (totalTokens = input + output + cache reads + cache writes), so the normalized input
 * is input + cache reads + cache writes, each cache counter priced as such (cached_input, cache_write).
 */
import type { TokenUsage } from '../types.js';

/** The counters of a Converse `usage` object. */
export interface ConverseCounters { input: number; output: number; cacheRead: number; cacheWrite: number }

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/** The counters of a Converse `usage`, or null when it carries no input count (no usage reported). */
export function readConverseUsage(usage: unknown): ConverseCounters | null {
  if (!usage || typeof usage !== 'object') return null;
  const u = usage as Record<string, unknown>;
  if (typeof u.inputTokens !== 'number') return null;
  return { input: count(u.inputTokens), output: count(u.outputTokens), cacheRead: count(u.cacheReadInputTokens), cacheWrite: count(u.cacheWriteInputTokens) };
}

/** The normalized usage (cache reads and writes are parts of `input`). */
export function converseTokenUsage(c: ConverseCounters): TokenUsage {
  return { input: c.input + c.cacheRead + c.cacheWrite, output: c.output, cachedInput: c.cacheRead, cacheWrite: c.cacheWrite, reasoning: 0 };
}

/** The Messages `usage` object for the counters (its input_tokens excludes the cache counters, as Bedrock's). */
export function messagesUsage(c: ConverseCounters): Record<string, number> {
  return { input_tokens: c.input, cache_creation_input_tokens: c.cacheWrite, cache_read_input_tokens: c.cacheRead, output_tokens: c.output };
}

/** The Messages `stop_reason` for a Converse StopReason. */
export function messagesStopReason(stopReason: unknown): string {
  switch (stopReason) {
    case 'tool_use': case 'max_tokens': case 'stop_sequence': case 'model_context_window_exceeded':
      return stopReason;
    case 'content_filtered': case 'guardrail_intervened':
      return 'refusal';
    default:
      // end_turn, and malformed_model_output / malformed_tool_use (the turn ended without a usable call).
      return 'end_turn';
  }
}
