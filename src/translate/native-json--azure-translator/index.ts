/**
 * The native translation request (spec 4.9) to Azure Translator v3 `POST /translate?api-version=3.0`
 * (docs/vendors/native-ops.md): the texts as `[{"text": ...}]`, each target language as its own `to`
 * query parameter, `from` only when given (else the vendor detects it). The answer is one entry per
 * input in order; `usage.characters` is what the vendor charged, from its `x-metered-usage` header
 * (the same the meter bills). Translator errors are `{error: {code, message}}`.
 */
import { GatewayError } from '../../errors.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

interface AzureTranslation { text?: unknown; to?: unknown }
interface AzureItem { detectedLanguage?: { language?: unknown; score?: unknown }; translations?: AzureTranslation[] }

const asList = (value: unknown): string[] => (Array.isArray(value) ? (value as string[]) : [value as string]);

function malformed(): GatewayError {
  return new GatewayError('upstream_error', 'The upstream provider sent a malformed translation answer.');
}

function readItem(item: AzureItem, index: number): Record<string, unknown> {
  if (!item || !Array.isArray(item.translations)) throw malformed();
  const translations = item.translations.map((t) => {
    if (typeof t.text !== 'string' || typeof t.to !== 'string') throw malformed();
    return { to: t.to, text: t.text };
  });
  const detected = item.detectedLanguage;
  const language = detected && typeof detected.language === 'string' ? { language: detected.language, score: typeof detected.score === 'number' ? detected.score : null } : null;
  return { index, ...(language ? { detected_language: language } : {}), translations };
}

/** Creates the translation translator for one request. */
export function createNativeJsonToAzureTranslator(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const texts = asList(clientBody.text);
  return {
    request: () => texts.map((text) => ({ text })),
    query: (body) => ({ to: asList(body.to), ...(typeof body.from === 'string' ? { from: [body.from] } : {}) }),
    response(upstream, clientModel, headers = {}) {
      const items: unknown = upstream;
      if (!Array.isArray(items) || items.length !== texts.length) throw malformed();
      const charged = Number(headers['x-metered-usage']);
      if (!Number.isSafeInteger(charged) || charged < 0) throw new GatewayError('upstream_error', 'The upstream provider did not report the characters it charged.');
      const data = (items as AzureItem[]).map(readItem);
      return { body: { object: 'list', model: clientModel, data, usage: { characters: charged } }, usage: null, outputText: '' };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Translation does not stream.'); },
    error: mapUpstreamError,
  };
}
