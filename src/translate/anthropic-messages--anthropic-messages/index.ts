/**
 * anthropic-messages client to the messages-format vendor (spec 4.4): forwarded natively, JSON and
 * the named-event stream. Usage rules (DESIGN.md pitfalls): the vendor's `input_tokens` excludes the
 * cache counters, so input = input + cache writes + cache reads; `message_delta` usage is
 * cumulative, so the latest value wins and nothing is summed; web searches come from
 * `server_tool_use.web_search_requests`.
 */
import type { CompiledOffering } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { countMessagesPromptTokens, countTextTokens } from '../../tokenize.js';
import { parseNamedEvent } from '../named-event.js';
import { formatSse, type SseEvent } from '../sse.js';
import type { StreamStep, StreamTranslator, TokenUsage, Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError, upstreamMessage } from '../upstream-error.js';
import { DeliveredText } from '../delivered.js';
import { checkOutputSchema, requireStructuredOutput } from '../anthropic-output-format.js';

/** The vendor's usage object (message, message_start and message_delta carry parts of it). */
export interface MessagesUsage {
  input_tokens?: number | null; output_tokens?: number | null;
  cache_creation_input_tokens?: number | null; cache_read_input_tokens?: number | null;
  server_tool_use?: { web_search_requests?: number | null } | null;
}

/**
 * Normalized usage from the vendor's counters, or null when they report no input at all: a
 * 0/0 `message_start` is "no usage reported" (DESIGN.md pitfalls), so the gateway counts instead.
 */
export function normalizeMessagesUsage(u: MessagesUsage): TokenUsage | null {
  if (!u.input_tokens && !u.cache_creation_input_tokens && !u.cache_read_input_tokens) return null;
  const write = u.cache_creation_input_tokens ?? 0;
  const read = u.cache_read_input_tokens ?? 0;
  const searches = u.server_tool_use?.web_search_requests ?? 0;
  return {
    input: (u.input_tokens ?? 0) + write + read, output: u.output_tokens ?? 0, cachedInput: read, cacheWrite: write, reasoning: 0,
    ...(searches > 0 ? { toolCalls: { web_search: searches } } : {}),
  };
}

interface Block { type?: string; text?: string; name?: string; input?: unknown; thinking?: string }

function blockText(blocks: Block[] | undefined): string {
  return (blocks ?? []).map((b) => b.text ?? b.thinking ?? (b.type === 'tool_use' ? `${b.name ?? ''}${JSON.stringify(b.input ?? {})}` : '')).join('');
}

class MessagesStream implements StreamTranslator {
  private counters: MessagesUsage | null = null;
  private readonly delivered = new DeliveredText();
  constructor(private readonly clientModel: string) {}

  push(event: SseEvent): StreamStep {
    const parsed = parseNamedEvent(event);
    if (parsed instanceof GatewayError) return { frames: [], error: parsed };
    const { type, data } = parsed;
    if (type === 'error') return { frames: [], error: new GatewayError('upstream_error', upstreamMessage(data) ?? 'The upstream provider failed mid-stream.') };
    if (type === 'message_start') {
      const message = data.message as { usage?: MessagesUsage; model?: string };
      message.model = this.clientModel;
      this.counters = { ...(message.usage ?? {}) };
    } else if (type === 'message_delta') {
      // Cumulative: each field present replaces the previous value.
      const latest = Object.fromEntries(Object.entries((data.usage ?? {}) as MessagesUsage).filter(([, v]) => v !== null && v !== undefined));
      this.counters = { ...(this.counters ?? {}), ...latest };
      // Clients' stream helpers read message_delta.usage; an upstream that omitted it gets the gateway's count.
      if (!data.usage) data.usage = { output_tokens: countTextTokens(this.delivered.text()) };
    } else if (type === 'content_block_start') {
      const block = data.content_block as Block;
      if (block.type === 'tool_use' && block.name) this.delivered.push(block.name);
    } else if (type === 'content_block_delta') {
      const delta = data.delta as { text?: string; partial_json?: string; thinking?: string };
      this.delivered.push(delta.text ?? delta.partial_json ?? delta.thinking ?? '');
    }
    return { frames: [formatSse(JSON.stringify(data), event.event ?? type)], done: type === 'message_stop' };
  }

  usage(): TokenUsage | null {
    return this.counters ? normalizeMessagesUsage(this.counters) : null;
  }


  deliveredText(): string { return this.delivered.text(); }
  deliveredLength(): number { return this.delivered.length; }
}

/** Maps upstream errors; the vendor's 529 "overloaded" is a 502 like any upstream failure. */
export function mapMessagesError(status: number, body: unknown, headers: Record<string, string>): GatewayError {
  return mapUpstreamError(status === 529 ? 503 : status, body, headers);
}

/**
 * Structured output, forwarded as sent (`output_config.format`, and the deprecated beta `output_format`
 * of the same shape): only to an offering that takes it (`structured_output: true`), and only with a
 * schema the vendor accepts (anthropic-output-format.ts), else a 400 before anything is reserved.
 */
function checkStructuredOutput(body: Record<string, unknown>, offering: CompiledOffering | undefined): void {
  const config = body.output_config as { format?: unknown } | null | undefined;
  const formats: Array<[string, unknown]> = [['output_config.format', config?.format], ['output_format', body.output_format]];
  for (const [param, format] of formats) {
    if (format === undefined || format === null) continue;
    requireStructuredOutput(offering, param);
    const { type, schema } = format as { type?: unknown; schema?: unknown };
    if (type !== 'json_schema' || typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
      throw new GatewayError('invalid_request', `${param}: expected {"type": "json_schema", "schema": {...}}.`, { param });
    }
    checkOutputSchema(schema, param);
  }
}

/** Creates the passthrough translator for one request. */
export function createAnthropicMessagesToAnthropicMessages(clientBody: Record<string, unknown>, options: TranslatorOptions): Translator {
  checkStructuredOutput(clientBody, options.offering);
  return {
    request: (body: Record<string, unknown>, offering: CompiledOffering) => ({ ...body, model: offering.upstreamModel }),
    response(upstream, clientModel) {
      const reported = upstream.usage ? normalizeMessagesUsage(upstream.usage as MessagesUsage) : null;
      const outputText = blockText(upstream.content as Block[]);
      const body: Record<string, unknown> = { ...upstream, model: clientModel };
      // A Message always carries usage (the vendor's schema requires it): the gateway's count when the upstream gave none.
      if (!reported) body.usage = { input_tokens: countMessagesPromptTokens(clientBody), output_tokens: countTextTokens(outputText) };
      return { body, usage: reported, outputText };
    },
    stream: (clientModel) => new MessagesStream(clientModel),
    error: mapMessagesError,
  };
}
