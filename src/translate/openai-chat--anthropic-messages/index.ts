/** openai-chat--anthropic-messages: being written (issue 3); refuses every request until then. */
import { GatewayError } from '../../errors.js';
import type { Translator, TranslatorOptions } from '../types.js';

/** Creates the openai-chat--anthropic-messages translator for one request. */
export function createOpenaiChatToAnthropicMessages(_clientBody: Record<string, unknown>, _options: TranslatorOptions): Translator {
  throw new GatewayError('model_not_available', 'This translation is not available yet.');
}
