/**
 * openai-chat client to anthropic-messages upstream. Request: request.ts (parameters), messages.ts
 * (messages and tools), content.ts (content parts). Answers: response.ts (JSON), stream.ts (events),
 * usage.ts (usage and stop reasons, shared by both). Parameters are checked when the translator is
 * created, so an unsupported one is refused before anything is reserved or sent.
 */
import { GatewayError } from '../../errors.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';
import { checkParams, toAnthropicRequest } from './request.js';
import { toChatCompletion } from './response.js';
import { AnthropicToChatStream } from './stream.js';

/** The client-facing error for an Anthropic error answer (`{type:"error", error:{type, message}}`). */
export function anthropicError(status: number, body: unknown, headers: Record<string, string>): GatewayError {
  const type = (body as { error?: { type?: unknown } } | null)?.error?.type;
  if (status === 529 || type === 'overloaded_error') return new GatewayError('upstream_error', 'The upstream provider is overloaded.');
  return mapUpstreamError(status, body, headers);
}

/** Creates the openai-chat--anthropic-messages translator for one request. */
export function createOpenaiChatToAnthropicMessages(clientBody: Record<string, unknown>, options: TranslatorOptions): Translator {
  // Structured output is checked against the offering the request is prepared for (its YAML flag).
  const jsonObject = checkParams(clientBody, options.offering).mode === 'object';
  const streamOptions = clientBody.stream_options as { include_usage?: unknown } | null | undefined;
  const clientWantsUsage = streamOptions?.include_usage === true;
  return {
    request: (body, offering) => toAnthropicRequest(body, offering),
    response: (upstream, clientModel) => toChatCompletion(upstream, clientModel, jsonObject),
    stream: (clientModel) => new AnthropicToChatStream(clientModel, clientWantsUsage, jsonObject),
    error: anthropicError,
  };
}
