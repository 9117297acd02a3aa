/** Translators by `<client format>--<upstream format>`; a new pair is one folder and one line here. */
import { GatewayError } from '../errors.js';
import { createAnthropicMessagesToAnthropicCountTokens } from './anthropic-messages--anthropic-count-tokens/index.js';
import { createAnthropicMessagesToAnthropicMessages } from './anthropic-messages--anthropic-messages/index.js';
import { createOpenaiChatToAnthropicMessages } from './openai-chat--anthropic-messages/index.js';
import { createOpenaiChatToOpenaiChat } from './openai-chat--openai-chat/index.js';
import { createOpenaiResponsesToOpenaiChat } from './openai-responses--openai-chat/index.js';
import { createOpenaiResponsesToOpenaiResponses } from './openai-responses--openai-responses/index.js';
import type { Translator, TranslatorFactory, TranslatorOptions } from './types.js';

const TRANSLATORS = new Map<string, TranslatorFactory>([
  ['openai-chat--openai-chat', createOpenaiChatToOpenaiChat],
  ['openai-chat--anthropic-messages', createOpenaiChatToAnthropicMessages],
  ['openai-responses--openai-responses', createOpenaiResponsesToOpenaiResponses],
  ['openai-responses--openai-chat', createOpenaiResponsesToOpenaiChat],
  ['anthropic-messages--anthropic-messages', createAnthropicMessagesToAnthropicMessages],
  ['anthropic-messages--anthropic-count-tokens', createAnthropicMessagesToAnthropicCountTokens],
]);

/** Every registered `<client>--<upstream>` pair (each must have golden fixtures). */
export function translatorPairs(): string[] {
  return [...TRANSLATORS.keys()];
}

/** True when a translator exists for the pair. */
export function hasTranslator(clientFormat: string, upstreamFormat: string): boolean {
  return TRANSLATORS.has(`${clientFormat}--${upstreamFormat}`);
}

/** A fresh translator for one request; a model whose format this route cannot reach is a client error. */
export function createTranslator(clientFormat: string, upstreamFormat: string, clientBody: Record<string, unknown>, model: string, options: TranslatorOptions = { params: {} }): Translator {
  const factory = TRANSLATORS.get(`${clientFormat}--${upstreamFormat}`);
  if (!factory) throw new GatewayError('model_not_available', `Model "${model}" cannot be used on this endpoint.`, { param: 'model' });
  return factory(clientBody, options);
}
