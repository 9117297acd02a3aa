/**
 * A Gemini answer as a `chat.completion`: the first candidate's text parts joined into `content`
 * (thought summaries left out; null when the answer is only function calls), its `functionCall` parts
 * as `tool_calls`, the finish reason as `finish_reason`, and `usageMetadata` as `usage`.
 */
import { randomUUID } from 'node:crypto';
import type { TokenUsage } from '../types.js';
import { candidateParts, firstCandidate, geminiStop, geminiTokenUsage, partCall, partText, promptBlocked, responseIdOf, type GeminiResponse } from '../gemini-generate-content.js';

/** Seconds since the epoch, for `created` (the vendor's answers carry no timestamp). */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A tool call's id: the vendor's when it gave one, else made from the answer's id and the call's number. */
export function callId(vendorId: string | null, answerId: string, k: number): string {
  return vendorId ?? `call_${answerId}_${k}`;
}

/** The answer's id for the client (`chatcmpl-<responseId>`), made up when the vendor gave none. */
export function completionId(upstream: GeminiResponse): string {
  return `chatcmpl-${responseIdOf(upstream) ?? randomUUID().replaceAll('-', '')}`;
}

/** The chat-completions `usage` object of a normalized usage (thoughts as reasoning tokens, part of completion_tokens). */
export function chatUsage(u: TokenUsage): Record<string, unknown> {
  return {
    prompt_tokens: u.input,
    completion_tokens: u.output,
    total_tokens: u.input + u.output,
    prompt_tokens_details: { cached_tokens: u.cachedInput },
    completion_tokens_details: { reasoning_tokens: u.reasoning },
  };
}

/** The chat-completion body, the normalized usage and the generated text. */
export function toChatCompletion(upstream: GeminiResponse, clientModel: string): { body: Record<string, unknown>; usage: TokenUsage | null; outputText: string } {
  const candidate = firstCandidate(upstream);
  const id = completionId(upstream);
  const text: string[] = [];
  const generated: string[] = [];
  const toolCalls: Array<Record<string, unknown>> = [];
  for (const part of candidateParts(candidate)) {
    const piece = partText(part);
    if (piece !== null) {
      text.push(piece);
      generated.push(piece);
    }
    const call = partCall(part);
    if (call) {
      toolCalls.push({ id: callId(call.id, id.slice(9), toolCalls.length), type: 'function', function: { name: call.name, arguments: call.arguments } });
      generated.push(call.name, call.arguments);
    }
  }
  const message: Record<string, unknown> = { role: 'assistant', content: text.length > 0 || toolCalls.length === 0 ? text.join('') : null, refusal: null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const finish = promptBlocked(upstream) ? 'content_filter' : geminiStop(candidate?.finishReason, toolCalls.length > 0);
  const usage = geminiTokenUsage(upstream.usageMetadata);
  const body: Record<string, unknown> = { id, object: 'chat.completion', created: nowSeconds(), model: clientModel, choices: [{ index: 0, message, logprobs: null, finish_reason: finish }] };
  if (usage) body.usage = chatUsage(usage);
  return { body, usage, outputText: generated.join('') };
}
