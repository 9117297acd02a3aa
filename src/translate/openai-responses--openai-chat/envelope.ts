/**
 * The Responses `Response` object, its output items, ids and usage: shared by JSON answers and
 * streams, so `response.completed` carries exactly what a JSON answer would.
 */
import { randomUUID } from 'node:crypto';
import type { TokenUsage } from '../types.js';
import { isObject, isSet, type Json } from './common.js';

/**
 * Item ids: derived from the gateway's request id when it is given (unique, so a stored response is
 * never confused with another account's answer to the same prompt, issue 31 item 3), else from the
 * upstream completion id, so the same answer always gets the same ids.
 */
export class Ids {
  private readonly suffix: string;
  constructor(chatId: unknown, requestId?: string) {
    const own = requestId?.replace(/^req_/, '');
    this.suffix = own || (typeof chatId === 'string' && chatId !== '' ? chatId.replace(/^chatcmpl-/, '') : randomUUID().replace(/-/g, ''));
  }
  get response(): string { return `resp_${this.suffix}`; }
  /** The n-th message item (a stream can need a second one when text follows a tool call). */
  message(n = 0): string { return n === 0 ? `msg_${this.suffix}` : `msg_${this.suffix}_${n}`; }
  /** The item for the chat tool call at `index`. */
  call(index: number, custom: boolean): string { return `${custom ? 'ctc' : 'fc'}_${this.suffix}_${index}`; }
  /** A call id for a tool call the upstream sent without one. */
  callId(index: number): string { return `call_${this.suffix}_${index}`; }
}

/** Unix seconds now. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A part of an assistant message. */
export type MessagePart = { type: 'output_text'; text: string } | { type: 'refusal'; text: string };

/** A part in Responses form. */
export function partJson(part: MessagePart): Json {
  return part.type === 'output_text' ? { type: 'output_text', text: part.text, annotations: [], logprobs: [] } : { type: 'refusal', refusal: part.text };
}

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export function messageItem(id: string, parts: MessagePart[], status: ItemStatus): Json {
  return { id, type: 'message', status, role: 'assistant', content: parts.map(partJson) };
}

/** A tool call the model made. */
export interface ToolCall { custom: boolean; id: string; callId: string; name: string; args: string }

/** A `function_call` or `custom_tool_call` item (the latter has no status in the API). */
export function toolItem(call: ToolCall, status: ItemStatus): Json {
  if (call.custom) return { id: call.id, type: 'custom_tool_call', call_id: call.callId, name: call.name, input: call.args };
  return { id: call.id, type: 'function_call', status, call_id: call.callId, name: call.name, arguments: call.args };
}

/** How a chat finish reason ends a Response. */
export function finishStatus(reason: unknown): { status: 'completed' | 'incomplete'; incomplete: string | null } {
  if (reason === 'length') return { status: 'incomplete', incomplete: 'max_output_tokens' };
  if (reason === 'content_filter') return { status: 'incomplete', incomplete: 'content_filter' };
  return { status: 'completed', incomplete: null };
}

/** Responses `usage` from normalized usage and the upstream's total. */
export function responsesUsage(usage: TokenUsage | null, upstream: unknown): Json | null {
  if (!usage) return null;
  const total = isObject(upstream) && typeof upstream.total_tokens === 'number' ? upstream.total_tokens : usage.input + usage.output;
  return {
    input_tokens: usage.input,
    input_tokens_details: { cached_tokens: usage.cachedInput, cache_write_tokens: usage.cacheWrite },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: usage.reasoning },
    total_tokens: total,
  };
}

/** What a Response says beyond the client's request echo. */
export interface ResponseState {
  id: string;
  createdAt: number;
  model: string;
  status: 'in_progress' | 'completed' | 'incomplete';
  incomplete: string | null;
  output: Json[];
  usage: Json | null;
  serviceTier?: unknown;
}

/** Client parameters echoed only when the client set them. */
const ECHO_IF_SET = ['user', 'safety_identifier', 'prompt_cache_key', 'prompt_cache_retention', 'max_tool_calls'] as const;

/**
 * The Response object: the fields the API marks required, plus the request echo the SDK types
 * describe, each with the value the gateway actually used. `output_text` is computed by the SDKs.
 */
export function buildResponse(client: Json, state: ResponseState): Json {
  const text = isObject(client.text) ? client.text : {};
  const response: Json = {
    id: state.id,
    object: 'response',
    created_at: state.createdAt,
    status: state.status,
    background: false,
    completed_at: state.status === 'completed' ? nowSeconds() : null,
    error: null,
    incomplete_details: state.incomplete ? { reason: state.incomplete } : null,
    instructions: client.instructions ?? null,
    max_output_tokens: client.max_output_tokens ?? null,
    metadata: client.metadata ?? {},
    model: state.model,
    output: state.output,
    parallel_tool_calls: client.parallel_tool_calls ?? true,
    // Both as the client sent them: the gateway's response store kept the answer and rebuilt the
    // previous turns into the input (src/pipeline/response-store.ts); `store` defaults to true, as OpenAI's.
    previous_response_id: client.previous_response_id ?? null,
    store: client.store ?? true,
    temperature: client.temperature ?? 1,
    text: { ...text, format: text.format ?? { type: 'text' } },
    tool_choice: client.tool_choice ?? 'auto',
    tools: client.tools ?? [],
    top_p: client.top_p ?? 1,
    truncation: client.truncation ?? 'disabled',
  };
  // The API omits usage until it is known (the schema has no null usage).
  if (state.usage) response.usage = state.usage;
  for (const key of ECHO_IF_SET) if (isSet(client[key])) response[key] = client[key];
  const tier = state.serviceTier ?? client.service_tier;
  if (isSet(tier)) response.service_tier = tier;
  return response;
}
