/**
 * Anthropic usage and stop reasons, read for a chat-completions client. Anthropic's `input_tokens`
 * EXCLUDES the cache counters, while a chat client's `prompt_tokens` (and our normalized `input`)
 * counts every prompt token: so the prompt total is input + cache writes + cache reads.
 */
import type { TokenUsage } from '../types.js';

/** The counters of an Anthropic `usage` object (a message's, or a `message_delta`'s cumulative one). */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  server_tool_use?: { web_search_requests?: number | null } | null;
}

/** Plain counters, every one a number. */
export interface UsageCounters { input: number; output: number; cacheWrite: number; cacheRead: number; webSearch: number; }

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : null;
}

/** Zeroed counters. */
export function emptyCounters(): UsageCounters {
  return { input: 0, output: 0, cacheWrite: 0, cacheRead: 0, webSearch: 0 };
}

/**
 * Overwrites `counters` with every counter `usage` reports. Anthropic's counters are cumulative
 * (a later `message_delta` repeats and extends the earlier ones), so the latest value wins: never sum.
 * Returns true when the usage carried `input_tokens`.
 */
export function applyUsage(counters: UsageCounters, usage: AnthropicUsage | null | undefined): boolean {
  if (!usage || typeof usage !== 'object') return false;
  const input = count(usage.input_tokens);
  const output = count(usage.output_tokens);
  const cacheWrite = count(usage.cache_creation_input_tokens);
  const cacheRead = count(usage.cache_read_input_tokens);
  const webSearch = count(usage.server_tool_use?.web_search_requests);
  if (input !== null) counters.input = input;
  if (output !== null) counters.output = output;
  if (cacheWrite !== null) counters.cacheWrite = cacheWrite;
  if (cacheRead !== null) counters.cacheRead = cacheRead;
  if (webSearch !== null) counters.webSearch = webSearch;
  return input !== null;
}

/** The counters of one Anthropic usage object, or null when it has no `input_tokens`. */
export function readCounters(usage: AnthropicUsage | null | undefined): UsageCounters | null {
  const counters = emptyCounters();
  return applyUsage(counters, usage) ? counters : null;
}

/**
 * The chat-completions `usage` object. Cache writes, which OpenAI's shape has no field for, are
 * reported as `prompt_tokens_details.cache_write_tokens` when there were any (OpenRouter's name), so a
 * translation chained behind this one (responses -> chat -> messages) reports them too.
 */
export function chatUsage(c: UsageCounters): Record<string, unknown> {
  const prompt = c.input + c.cacheWrite + c.cacheRead;
  const details: Record<string, number> = { cached_tokens: c.cacheRead };
  if (c.cacheWrite > 0) details.cache_write_tokens = c.cacheWrite;
  return {
    prompt_tokens: prompt,
    completion_tokens: c.output,
    total_tokens: prompt + c.output,
    prompt_tokens_details: details,
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

/** The normalized usage (cache writes and reads are parts of `input`). */
export function tokenUsage(c: UsageCounters): TokenUsage {
  const usage: TokenUsage = { input: c.input + c.cacheWrite + c.cacheRead, output: c.output, cachedInput: c.cacheRead, cacheWrite: c.cacheWrite, reasoning: 0 };
  if (c.webSearch > 0) usage.toolCalls = { web_search: c.webSearch };
  return usage;
}

/** Chat `finish_reason` for an Anthropic `stop_reason`. */
export function finishReason(stopReason: unknown): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, and pause_turn (only with server tools, which this translator never sends).
      return 'stop';
  }
}
