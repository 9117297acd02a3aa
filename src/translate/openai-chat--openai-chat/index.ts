/**
 * openai-chat client to openai-chat upstream: the identity translation, plus the metering rules of
 * spec 4.1: the upstream is always asked for stream usage, and the usage chunk reaches the client
 * only if the client asked for it. Model ids are the gateway's own on the client side.
 */
import type { CompiledOffering } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import type { SseEvent } from '../sse.js';
import type { StreamStep, StreamTranslator, TokenUsage, Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError, upstreamMessage } from '../upstream-error.js';

interface ChatUsage {
  prompt_tokens?: number; completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number } | null;
}

/** Normalized usage from a chat-completions `usage` object. */
export function readChatUsage(usage: ChatUsage | null | undefined): TokenUsage | null {
  if (!usage || typeof usage.prompt_tokens !== 'number') return null;
  return {
    input: usage.prompt_tokens,
    output: usage.completion_tokens ?? 0,
    cachedInput: usage.prompt_tokens_details?.cached_tokens ?? 0,
    cacheWrite: 0,
    reasoning: usage.completion_tokens_details?.reasoning_tokens ?? 0,
  };
}

interface ChatDelta { content?: string | null; refusal?: string | null; tool_calls?: Array<{ function?: { name?: string; arguments?: string } }> }
interface ChunkChoice { delta?: ChatDelta }

/** The generated text of a message or delta: content, refusal, tool names and arguments. */
function generatedText(part: ChatDelta | undefined, out: string[]): void {
  if (!part) return;
  if (part.content) out.push(part.content);
  if (part.refusal) out.push(part.refusal);
  for (const call of part.tool_calls ?? []) {
    if (call.function?.name) out.push(call.function.name);
    if (call.function?.arguments) out.push(call.function.arguments);
  }
}

const NULL_USAGE = ',"usage":null';

/**
 * A chunk as the client gets it: the gateway's model id, and without `usage` when the client did not
 * ask for it (the upstream always reports it, spec 4.1 rule 1). Edited as text where the upstream's
 * text has the usual compact form (`"model":"<id>"`, `,"usage":null`): a quote in a JSON string is
 * escaped, so those sequences are keys and values, never content. Anything else is re-serialized from
 * the parsed chunk. Re-serializing every chunk cost about a fifth of a stream's CPU.
 */
export function clientChunk(data: string, chunk: Record<string, unknown>, clientModel: string, dropUsage: boolean): string {
  let text = data;
  if (chunk.model !== clientModel) {
    const upstreamModel = typeof chunk.model === 'string' ? `"model":${JSON.stringify(chunk.model)}` : null;
    if (!upstreamModel || !text.includes(upstreamModel)) return reserialized(chunk, clientModel, dropUsage);
    text = text.replaceAll(upstreamModel, `"model":${JSON.stringify(clientModel)}`);
  }
  if (dropUsage) {
    const at = chunk.usage === null ? text.lastIndexOf(NULL_USAGE) : -1;
    if (at < 0) return reserialized(chunk, clientModel, dropUsage);
    text = text.slice(0, at) + text.slice(at + NULL_USAGE.length);
  }
  return text;
}

function reserialized(chunk: Record<string, unknown>, clientModel: string, dropUsage: boolean): string {
  const copy: Record<string, unknown> = { ...chunk, model: clientModel };
  if (dropUsage) delete copy.usage;
  return JSON.stringify(copy);
}

class ChatStream implements StreamTranslator {
  private reported: TokenUsage | null = null;
  private delivered: string[] = [];
  constructor(private readonly clientModel: string, private readonly clientWantsUsage: boolean) {}

  push(event: SseEvent): StreamStep {
    if (event.data === '[DONE]') return { frames: [], done: true };
    let chunk: Record<string, unknown>;
    try { chunk = JSON.parse(event.data) as Record<string, unknown>; }
    catch { return { frames: [], error: new GatewayError('upstream_error', 'The upstream provider sent a malformed stream event.') }; }
    if (chunk.error) return { frames: [], error: new GatewayError('upstream_error', upstreamMessage(chunk) ?? 'The upstream provider failed mid-stream.') };
    if (chunk.usage) this.reported = readChatUsage(chunk.usage as ChatUsage) ?? this.reported;
    const choices = Array.isArray(chunk.choices) ? (chunk.choices as ChunkChoice[]) : [];
    for (const choice of choices) generatedText(choice.delta, this.delivered);
    const dropUsage = !this.clientWantsUsage && 'usage' in chunk;
    if (dropUsage && choices.length === 0) return { frames: [] };
    return { frames: [`data: ${clientChunk(event.data, chunk, this.clientModel, dropUsage)}\n\n`] };
  }

  usage(): TokenUsage | null { return this.reported; }
  deliveredText(): string { return this.delivered.join(''); }

}

/** Creates the identity translator for one request. */
export function createOpenaiChatToOpenaiChat(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const streamOptions = clientBody.stream_options as { include_usage?: boolean } | null | undefined;
  const clientWantsUsage = streamOptions?.include_usage === true;
  return {
    request(body: Record<string, unknown>, offering: CompiledOffering) {
      const upstream: Record<string, unknown> = { ...body, model: offering.upstreamModel };
      // Spec 4.1 rule 1: streams are metered like JSON answers, so the upstream always reports usage.
      if (body.stream === true) upstream.stream_options = { ...(streamOptions ?? {}), include_usage: true };
      return upstream;
    },
    response(upstream, clientModel) {
      const text: string[] = [];
      for (const choice of (upstream.choices as Array<{ message?: ChatDelta }> | undefined) ?? []) generatedText(choice.message, text);
      return { body: { ...upstream, model: clientModel }, usage: readChatUsage(upstream.usage as ChatUsage), outputText: text.join('') };
    },
    stream: (clientModel) => new ChatStream(clientModel, clientWantsUsage),
    error: mapUpstreamError,
  };
}
