/**
 * A Gemini answer as a messages-format `message`: the first candidate's text parts as text blocks
 * (consecutive ones joined; thought summaries left out), its `functionCall` parts as `tool_use`
 * blocks, the finish reason as `stop_reason`, and `usageMetadata` as `usage`, whose `input_tokens`
 * EXCLUDES the cached part (the vendor's promptTokenCount includes it; messages clients add
 * cache_read_input_tokens back).
 */
import { randomUUID } from 'node:crypto';
import type { TokenUsage } from '../types.js';
import { candidateParts, firstCandidate, geminiStop, geminiTokenUsage, partCall, partText, promptBlocked, responseIdOf, type GeminiResponse, type GeminiStop } from '../gemini-generate-content.js';

const STOP_REASONS: Record<GeminiStop, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'refusal' };

/** The messages `stop_reason` of how a Gemini answer ended. */
export function stopReason(stop: GeminiStop): string {
  return STOP_REASONS[stop];
}

/** The message's id for the client (`msg_<responseId>`), made up when the vendor gave none. */
export function messageId(upstream: GeminiResponse): string {
  return `msg_${responseIdOf(upstream) ?? randomUUID().replaceAll('-', '')}`;
}

/** A tool_use block's id: the vendor's call id when it gave one, else made from the message's id and the call's number. */
export function toolUseId(vendorId: string | null, messageId: string, k: number): string {
  return vendorId ?? `toolu_${messageId.slice(4)}_${k}`;
}

/** The messages `usage` of a normalized usage (no cache writes: the vendor's caching writes nothing billable here). */
export function messagesUsage(u: TokenUsage | null): Record<string, number> {
  if (!u) return { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  return { input_tokens: u.input - u.cachedInput, output_tokens: u.output, cache_creation_input_tokens: 0, cache_read_input_tokens: u.cachedInput };
}

/** The message body, the normalized usage and the generated text. */
export function toMessage(upstream: GeminiResponse, clientModel: string): { body: Record<string, unknown>; usage: TokenUsage | null; outputText: string } {
  const candidate = firstCandidate(upstream);
  const id = messageId(upstream);
  const content: Array<Record<string, unknown>> = [];
  const generated: string[] = [];
  let calls = 0;
  for (const part of candidateParts(candidate)) {
    const text = partText(part);
    if (text) {
      const last = content[content.length - 1];
      if (last?.type === 'text') last.text = `${last.text as string}${text}`;
      else content.push({ type: 'text', text });
      generated.push(text);
    }
    const call = partCall(part);
    if (call) {
      content.push({ type: 'tool_use', id: toolUseId(call.id, id, calls++), name: call.name, input: JSON.parse(call.arguments) as unknown });
      generated.push(call.name, call.arguments);
    }
  }
  const stop = promptBlocked(upstream) ? 'content_filter' : geminiStop(candidate?.finishReason, calls > 0);
  const usage = geminiTokenUsage(upstream.usageMetadata);
  const body = { id, type: 'message', role: 'assistant', model: clientModel, content, stop_reason: stopReason(stop), stop_sequence: null, usage: messagesUsage(usage) };
  return { body, usage, outputText: generated.join('') };
}
