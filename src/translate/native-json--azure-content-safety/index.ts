/**
 * The native moderation request (spec 4.11) to Azure AI Content Safety
 * `POST /contentsafety/text:analyze?api-version=2024-09-01` (docs/vendors/native-ops.md section 3):
 * exactly one of `text`, `image`, `file_id`; only `text` is served until files arrive, and the other
 * two are refused with a 400 naming them, before anything is reserved. `categories` restrict the
 * scoring (all four when absent). The answer is each category's severity (0, 2, 4, 6) and
 * `usage.records` = 1: one record per call whatever the vendor counts (spec 1; the meter's constant).
 * Content Safety errors are Azure.Core `{error: {code, message}}`.
 */
import { GatewayError } from '../../errors.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

/** The inputs of which a request names exactly one (spec 4.11). */
const INPUTS = ['text', 'image', 'file_id'] as const;

/** Refuses none or several inputs, and the inputs not served yet, naming them. */
function checkInput(body: Record<string, unknown>): void {
  const given = INPUTS.filter((name) => body[name] !== undefined);
  if (given.length === 0) {
    throw new GatewayError('invalid_request', "Missing input: provide exactly one of 'text', 'image' or 'file_id'.", { param: 'text' });
  }
  if (given.length > 1) {
    throw new GatewayError('invalid_request', `Provide exactly one of 'text', 'image' or 'file_id'; this request has ${given.map((n) => `'${n}'`).join(' and ')}.`, { param: given[1]! });
  }
  if (given[0] !== 'text') {
    throw new GatewayError('unsupported_parameter', `'${given[0]}' is not served yet: moderation of images and files arrives with file support. Send 'text' for now.`, { param: given[0]! });
  }
}

interface CategoryAnalysis { category?: unknown; severity?: unknown }

function malformed(): GatewayError {
  return new GatewayError('upstream_error', 'The upstream provider sent a malformed moderation answer.');
}

/** Creates the moderation translator for one request. */
export function createNativeJsonToAzureContentSafety(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  checkInput(clientBody);
  return {
    request: (body) => ({ text: body.text, ...(body.categories !== undefined ? { categories: body.categories } : {}) }),
    response(upstream, clientModel) {
      const analysis = upstream.categoriesAnalysis;
      if (!Array.isArray(analysis)) throw malformed();
      const categories = (analysis as CategoryAnalysis[]).map((c) => {
        if (!c || typeof c.category !== 'string' || (c.severity !== undefined && (typeof c.severity !== 'number' || !Number.isInteger(c.severity)))) throw malformed();
        return { category: c.category, severity: c.severity ?? null };
      });
      return { body: { object: 'moderation', model: clientModel, categories_analysis: categories, usage: { records: 1 } }, usage: null, outputText: '' };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Moderation does not stream.'); },
    error: mapUpstreamError,
  };
}
