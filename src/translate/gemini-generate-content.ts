/**
 * What every translator to the Gemini generateContent format shares (Google AI Studio's
 * /v1beta/models/{model}:generateContent and Vertex AI's .../publishers/google/models/{model}:
 * generateContent, the same bodies; docs/vendors/gemini.md): the usage reader, the answer's parts, the
 * error mapping, and the stream chunk parser. Wire types: docs/vendors/gemini/.
 */
import { GatewayError } from '../errors.js';
import type { TokenUsage } from './types.js';
import { mapUpstreamError, upstreamMessage } from './upstream-error.js';

type Rec = Record<string, unknown>;

/** A Gemini `usageMetadata` (GenerateContentResponseUsageMetadata). */
export interface GeminiUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

/** A content part the translators read from an answer (text, thought text, or a function call). */
export interface GeminiPart { text?: unknown; thought?: unknown; functionCall?: { id?: unknown; name?: unknown; args?: unknown } }

/** One candidate of an answer (or of a stream chunk). */
export interface GeminiCandidate { content?: { parts?: GeminiPart[] }; finishReason?: unknown; index?: unknown }

/** A GenerateContentResponse (an answer, or one chunk of a stream). */
export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  usageMetadata?: GeminiUsage;
  promptFeedback?: { blockReason?: unknown };
  responseId?: unknown;
  modelVersion?: unknown;
  error?: unknown;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

/**
 * The normalized usage of a `usageMetadata`, or null when it has no prompt count. `promptTokenCount`
 * counts the whole prompt, the cached part (`cachedContentTokenCount`) included, so it is `input` and
 * the cached part `cachedInput` (priced as cached input). Thoughts are generated tokens billed as
 * output (Google's pricing: "output price, including thinking tokens"), and `candidatesTokenCount`
 * excludes them: output = candidates + thoughts, reasoning = thoughts. `toolUsePromptTokenCount` (the
 * prompt of a built-in tool's results, outside promptTokenCount) is input too.
 */
export function geminiTokenUsage(usage: GeminiUsage | null | undefined): TokenUsage | null {
  if (!usage || typeof usage !== 'object' || typeof usage.promptTokenCount !== 'number') return null;
  const thoughts = count(usage.thoughtsTokenCount);
  const input = count(usage.promptTokenCount) + count(usage.toolUsePromptTokenCount);
  return { input, output: count(usage.candidatesTokenCount) + thoughts, cachedInput: Math.min(count(usage.cachedContentTokenCount), input), cacheWrite: 0, reasoning: thoughts };
}

/** The answer's first candidate (the translators ask for one: candidateCount is never above 1). */
export function firstCandidate(response: GeminiResponse): GeminiCandidate | null {
  const candidates = Array.isArray(response.candidates) ? response.candidates : [];
  return candidates[0] ?? null;
}

/** The parts of a candidate's content (empty when it has none). */
export function candidateParts(candidate: GeminiCandidate | null): GeminiPart[] {
  const parts = candidate?.content?.parts;
  return Array.isArray(parts) ? parts.filter((p): p is GeminiPart => !!p && typeof p === 'object') : [];
}

/** Visible text of a part: its `text` unless it is a thought summary (`thought: true`), which is not answer text. */
export function partText(part: GeminiPart): string | null {
  return typeof part.text === 'string' && part.thought !== true ? part.text : null;
}

/** A function call of a part, its arguments as JSON text (`{}` when it has none). */
export function partCall(part: GeminiPart): { id: string | null; name: string; arguments: string } | null {
  const call = part.functionCall;
  if (!call || typeof call !== 'object' || typeof call.name !== 'string') return null;
  const args = call.args && typeof call.args === 'object' && !Array.isArray(call.args) ? call.args : {};
  return { id: typeof call.id === 'string' && call.id !== '' ? call.id : null, name: call.name, arguments: JSON.stringify(args) };
}

/** How an answer ended, in the gateway's words (each client format names them its own way). */
export type GeminiStop = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** Reasons the vendor stopped on content grounds (FinishReason, and a prompt's blockReason). */
const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION']);

/**
 * How the answer ended: MAX_TOKENS is `length`; the content-grounds reasons `content_filter`; a STOP
 * with function calls `tool_calls` (the vendor says STOP either way); anything else (STOP, OTHER,
 * LANGUAGE, MALFORMED_FUNCTION_CALL, ...) `stop`.
 */
export function geminiStop(finishReason: unknown, hasCalls: boolean): GeminiStop {
  if (finishReason === 'MAX_TOKENS') return 'length';
  if (typeof finishReason === 'string' && FILTERED.has(finishReason)) return 'content_filter';
  return hasCalls ? 'tool_calls' : 'stop';
}

/** True when the prompt itself was blocked (`promptFeedback.blockReason`, no candidates). */
export function promptBlocked(response: GeminiResponse): boolean {
  return typeof response.promptFeedback?.blockReason === 'string' && firstCandidate(response) === null;
}

/** The vendor's message for a prompt over the model's input limit (a 400 INVALID_ARGUMENT). */
const TOO_LONG = /input token count .*exceeds the maximum/i;

/**
 * The client-facing error for a Gemini error answer (`{error: {code, message, status}}`, Google's
 * RPC status shape): a prompt over the model's limit is context_length_exceeded (another model may
 * serve it), the rest as any upstream's.
 */
export function geminiError(status: number, body: unknown, headers: Record<string, string>): GatewayError {
  const message = upstreamMessage(body);
  if (status === 400 && message !== null && TOO_LONG.test(message)) return new GatewayError('context_length_exceeded', message, { param: null });
  return mapUpstreamError(status, body, headers);
}

/** A parsed stream chunk, or the error that ends the stream (a malformed chunk, or an `error` object the vendor sent). */
export function parseChunk(data: string): { chunk: GeminiResponse } | { error: GatewayError } {
  let chunk: unknown;
  try { chunk = JSON.parse(data); } catch { return { error: new GatewayError('upstream_error', 'The upstream provider sent a malformed stream event.') }; }
  if (!chunk || typeof chunk !== 'object' || Array.isArray(chunk)) return { error: new GatewayError('upstream_error', 'The upstream provider sent a malformed stream event.') };
  const record = chunk as Rec;
  if (record.error) return { error: new GatewayError('upstream_error', upstreamMessage(record) ?? 'The upstream provider failed mid-stream.') };
  return { chunk: record as GeminiResponse };
}

/** The answer's id as the vendor named it (`responseId`), or null. */
export function responseIdOf(response: GeminiResponse): string | null {
  return typeof response.responseId === 'string' && response.responseId !== '' ? response.responseId : null;
}
