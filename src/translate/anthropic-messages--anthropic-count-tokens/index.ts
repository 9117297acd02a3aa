/**
 * The free count_tokens pre-flight (spec 4.4): forwarded to the vendor's count endpoint, never
 * billed. A request referencing a stored file is refused with `file_token_count_unsupported`:
 * contents are not estimated from an id.
 */
import type { CompiledOffering } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { mapMessagesError } from '../anthropic-messages--anthropic-messages/index.js';
import type { Translator, TranslatorOptions } from '../types.js';

function referencesFile(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(referencesFile);
  if (!value || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  if (record.type === 'file' && typeof record.file_id === 'string') return true;
  return Object.values(record).some(referencesFile);
}

/** Creates the count-tokens translator for one request. */
export function createAnthropicMessagesToAnthropicCountTokens(clientBody: Record<string, unknown>, _options: TranslatorOptions): Translator {
  if (referencesFile(clientBody.messages) || referencesFile(clientBody.system)) {
    throw new GatewayError('file_token_count_unsupported', 'count_tokens cannot count a request that references a stored file: its contents are not estimated from the id.', { param: 'messages' });
  }
  return {
    request: (body: Record<string, unknown>, offering: CompiledOffering) => ({ ...body, model: offering.upstreamModel }),
    response: (upstream) => ({ body: upstream, usage: null, outputText: '' }),
    stream: () => { throw new GatewayError('invalid_request', 'count_tokens does not stream.'); },
    error: mapMessagesError,
  };
}
