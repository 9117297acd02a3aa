/**
 * openai-responses client to a responses-passthrough upstream (spec 4.2 rule 1): forwarded natively,
 * JSON and the named-event stream. The translator only maps model ids, refuses the built-ins the
 * gateway never serves, and reads usage: tokens from `usage`, one web search per `web_search_call`.
 */
import type { CompiledOffering } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { responsesErrorFrame } from '../../formats/openai-responses/index.js';
import { refuseUnavailableTools } from '../builtin-tools.js';
import { parseNamedEvent } from '../named-event.js';
import { formatSse, type SseEvent } from '../sse.js';
import type { StreamStep, StreamTranslator, TokenUsage, Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError, upstreamMessage } from '../upstream-error.js';
import { DeliveredText } from '../delivered.js';

interface ResponsesUsage { input_tokens?: number; output_tokens?: number; input_tokens_details?: { cached_tokens?: number } | null; output_tokens_details?: { reasoning_tokens?: number } | null; }
interface OutputItem { type?: string; name?: string; arguments?: string; content?: Array<{ type?: string; text?: string }> }
interface ResponseObject { model?: string; usage?: ResponsesUsage | null; output?: OutputItem[] }

/** Normalized usage of a Response: tokens, and one web search per reported `web_search_call` item. */
export function readResponseUsage(response: ResponseObject): TokenUsage | null {
  const usage = response.usage;
  if (!usage || typeof usage.input_tokens !== 'number') return null;
  const searches = (response.output ?? []).filter((item) => item.type === 'web_search_call').length;
  return {
    input: usage.input_tokens, output: usage.output_tokens ?? 0,
    cachedInput: usage.input_tokens_details?.cached_tokens ?? 0, cacheWrite: 0,
    reasoning: usage.output_tokens_details?.reasoning_tokens ?? 0,
    ...(searches > 0 ? { toolCalls: { web_search: searches } } : {}),
  };
}

function outputText(response: ResponseObject): string {
  const parts: string[] = [];
  for (const item of response.output ?? []) {
    for (const part of item.content ?? []) if (typeof part.text === 'string') parts.push(part.text);
    if (item.name) parts.push(item.name);
    if (item.arguments) parts.push(item.arguments);
  }
  return parts.join('');
}

const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete']);

class ResponsesStream implements StreamTranslator {
  private reported: TokenUsage | null = null;
  private nextSequence = 0;
  private readonly delivered = new DeliveredText();
  constructor(private readonly clientModel: string) {}

  push(event: SseEvent): StreamStep {
    const parsed = parseNamedEvent(event);
    if (parsed instanceof GatewayError) return { frames: [], error: parsed };
    const { type, data } = parsed;
    if (type === 'error' || type === 'response.failed') {
      return { frames: [], error: new GatewayError('upstream_error', upstreamMessage(data) ?? upstreamMessage((data.response as Record<string, unknown> | undefined)?.error) ?? 'The upstream provider failed mid-stream.') };
    }
    if (type === 'response.output_text.delta' || type === 'response.function_call_arguments.delta') this.delivered.push(String(data.delta ?? ''));
    if (type === 'response.output_item.added' && typeof (data.item as OutputItem | undefined)?.name === 'string') this.delivered.push((data.item as OutputItem).name!);
    if (typeof data.sequence_number === 'number') this.nextSequence = data.sequence_number + 1;
    const response = data.response as ResponseObject | undefined;
    if (response && typeof response === 'object') {
      response.model = this.clientModel;
      if (FINAL_EVENTS.has(type)) this.reported = readResponseUsage(response);
    }
    return { frames: [formatSse(JSON.stringify(data), event.event ?? type)], done: FINAL_EVENTS.has(type) };
  }

  usage(): TokenUsage | null { return this.reported; }
  deliveredText(): string { return this.delivered.text(); }
  deliveredLength(): number { return this.delivered.length; }
  errorFrame(error: GatewayError): string { return responsesErrorFrame(error, this.nextSequence); }
}

/** Creates the passthrough translator for one request. */
export function createOpenaiResponsesToOpenaiResponses(clientBody: Record<string, unknown>, _options: TranslatorOptions): Translator {
  refuseUnavailableTools(clientBody.tools);
  return {
    request: (body: Record<string, unknown>, offering: CompiledOffering) => ({ ...body, model: offering.upstreamModel }),
    response(upstream, clientModel) {
      const response = upstream as ResponseObject;
      return { body: { ...upstream, model: clientModel }, usage: readResponseUsage(response), outputText: outputText(response) };
    },
    stream: (clientModel) => new ResponsesStream(clientModel),
    error: mapUpstreamError,
  };
}
