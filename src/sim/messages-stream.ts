/**
 * Anthropic Messages wire shapes of a simulator answer: usage (after the prompt-cache split), the
 * Message JSON body, and the stream of named server-sent events.
 */
import { namedEvent } from './exchange.js';
import type { MessagesAnswer } from './messages.js';
import { slices, type Rec } from './text.js';

/** `usage` of a Message exactly as the simulator reports it; `input_tokens` excludes both cache counters. */
export interface MessagesUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  output_tokens: number;
  server_tool_use: { web_search_requests: number; web_fetch_requests: number } | null;
  service_tier: 'standard';
  inference_geo: null;
}

/** How a request's input splits between fresh input, cache writes and cache reads. */
export interface CacheSplit { creation: number; read: number; ttl: '5m' | '1h' }

/** The usage of an answer given its cache split. */
export function messagesUsage(a: MessagesAnswer, split: CacheSplit): MessagesUsage {
  return {
    input_tokens: a.total_input_tokens - split.creation - split.read,
    cache_creation_input_tokens: split.creation,
    cache_read_input_tokens: split.read,
    cache_creation: {
      ephemeral_5m_input_tokens: split.ttl === '5m' ? split.creation : 0,
      ephemeral_1h_input_tokens: split.ttl === '1h' ? split.creation : 0,
    },
    output_tokens: a.output_tokens,
    server_tool_use: a.web_search_requests > 0 ? { web_search_requests: a.web_search_requests, web_fetch_requests: 0 } : null,
    service_tier: 'standard',
    inference_geo: null,
  };
}

/** The Message object; `usage` is left out when null (fault omit_usage). */
export function messageBody(a: MessagesAnswer, usage: MessagesUsage | null): Rec {
  const body: Rec = {
    id: a.id, type: 'message', role: 'assistant', model: a.model, content: a.content,
    stop_reason: a.stop_reason, stop_sequence: a.stop_sequence, stop_details: null, container: null,
  };
  if (usage) body.usage = usage;
  return body;
}

/** The `error` event of fault error_after_chunks. */
export const MESSAGES_ERROR_EVENT = namedEvent('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });

/** The broken text delta of fault malformed_after_chunks (not valid JSON). */
export const MESSAGES_MALFORMED_EVENT = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text": oops\n\n';

/** Partial-JSON pieces of a tool input: an empty first piece, then the JSON in two halves. */
const jsonPieces = (input: unknown): string[] => ['', ...slices(JSON.stringify(input ?? {}), 2)];

/**
 * Every event of the stream in order: message_start (empty content; usage with the input counters
 * and output_tokens 1), then per block content_block_start, (ping once, after the first start),
 * content_block_delta (text_delta per word; input_json_delta "", then two halves, for tool_use and
 * server_tool_use), content_block_stop; message_delta (stop_reason, cumulative usage with the input
 * counters repeated) and message_stop. With `usage` null (omit_usage) message_start reports zeros and
 * message_delta carries no usage.
 */
export function messagesStreamEvents(a: MessagesAnswer, usage: MessagesUsage | null): string[] {
  const out: string[] = [];
  const emit = (type: string, fields: Rec = {}) => out.push(namedEvent(type, { type, ...fields }));
  const startUsage: MessagesUsage = usage
    ? { ...usage, output_tokens: 1, server_tool_use: null }
    : {
      input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 },
      output_tokens: 0, server_tool_use: null, service_tier: 'standard', inference_geo: null,
    };
  emit('message_start', { message: { ...messageBody({ ...a, content: [] }, startUsage), stop_reason: null, stop_sequence: null } });
  a.content.forEach((block, index) => {
    if (block.type === 'text') {
      emit('content_block_start', { index, content_block: { ...block, text: '' } });
    } else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
      emit('content_block_start', { index, content_block: { ...block, input: {} } });
    } else {
      emit('content_block_start', { index, content_block: block });
    }
    if (index === 0) emit('ping');
    if (block.type === 'text') {
      for (const word of a.words) emit('content_block_delta', { index, delta: { type: 'text_delta', text: word } });
    } else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
      for (const piece of jsonPieces(block.input)) emit('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    emit('content_block_stop', { index });
  });
  const delta = { stop_reason: a.stop_reason, stop_sequence: a.stop_sequence, stop_details: null, container: null };
  if (usage) {
    const { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens, server_tool_use } = usage;
    emit('message_delta', { delta, usage: { input_tokens, cache_creation_input_tokens, cache_read_input_tokens, output_tokens, server_tool_use } });
  } else {
    emit('message_delta', { delta });
  }
  emit('message_stop');
  return out;
}
