/** openai-responses--openai-responses: being written (issue 3); refuses every request until then. */
import { GatewayError } from '../../errors.js';
import type { Translator, TranslatorOptions } from '../types.js';

/** Creates the openai-responses--openai-responses translator for one request. */
export function createOpenaiResponsesToOpenaiResponses(_clientBody: Record<string, unknown>, _options: TranslatorOptions): Translator {
  throw new GatewayError('model_not_available', 'This translation is not available yet.');
}
