/** Translators by `<client format>--<upstream format>`; a new pair is one folder and one line here. */
import { GatewayError } from '../errors.js';
import { createOpenaiChatToOpenaiChat } from './openai-chat--openai-chat/index.js';
import type { Translator, TranslatorFactory } from './types.js';

const TRANSLATORS = new Map<string, TranslatorFactory>([
  ['openai-chat--openai-chat', createOpenaiChatToOpenaiChat],
]);

/** True when a translator exists for the pair. */
export function hasTranslator(clientFormat: string, upstreamFormat: string): boolean {
  return TRANSLATORS.has(`${clientFormat}--${upstreamFormat}`);
}

/** A fresh translator for one request; a model whose format this route cannot reach is a client error. */
export function createTranslator(clientFormat: string, upstreamFormat: string, clientBody: Record<string, unknown>, model: string): Translator {
  const factory = TRANSLATORS.get(`${clientFormat}--${upstreamFormat}`);
  if (!factory) throw new GatewayError('model_not_available', `Model "${model}" cannot be used on this endpoint.`, { param: 'model' });
  return factory(clientBody);
}
