/**
 * Cohere's own rerank shape (issue 31 item 11: `POST /v2/rerank`, what `CohereClientV2.rerank`
 * sends) to Cohere's `POST /v2/rerank`: the same request (cohere-rerank.ts), and Cohere's answer
 * (V2RerankResponse: `id`, `results`, `meta`) with `meta.billed_units.search_units` = 1, the one search
 * unit the gateway bills per request whatever the vendor reports (spec 1, 4.13).
 */
import { GatewayError } from '../../errors.js';
import { cohereRerankRequest, readRerankResults } from '../cohere-rerank.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

/** Creates the Cohere-shaped rerank translator for one request. */
export function createCohereToCohereRerank(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const documents = clientBody.documents as string[];
  return {
    request: (body, offering) => cohereRerankRequest(body, documents, offering),
    response(upstream) {
      const results = readRerankResults(upstream, documents, clientBody.return_documents === true);
      if (typeof upstream.id !== 'string') throw new GatewayError('upstream_error', 'The upstream provider sent a rerank answer without its id.');
      return { body: { id: upstream.id, results, meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } } }, usage: null, outputText: '' };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Rerank does not stream.'); },
    error: mapUpstreamError,
  };
}
