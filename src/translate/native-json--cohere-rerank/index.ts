/**
 * The native rerank request (spec 4.13) to Cohere's `POST /v2/rerank` (docs/vendors/native-ops.md):
 * documents as strings (an object's `text` is sent as the string: v2 takes no objects), `top_n` and
 * `max_tokens_per_doc` as is; the answer's indexes and relevance scores back (with each `document`
 * when `return_documents` is set: Cohere's v1 option, which its v1 client and LangChain's CohereRerank
 * send), with `usage.searches` = 1 (one search unit per request whatever the vendor bills, spec 1).
 * Cohere errors are `{id, message}`.
 */
import { GatewayError } from '../../errors.js';
import { cohereRerankRequest, readRerankResults, type RerankDocument } from '../cohere-rerank.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

/** Creates the rerank translator for one request. */
export function createNativeJsonToCohereRerank(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const documents = clientBody.documents as RerankDocument[];
  return {
    request: (body, offering) => cohereRerankRequest(body, documents, offering),
    response(upstream, clientModel) {
      const results = readRerankResults(upstream, documents, clientBody.return_documents === true);
      return { body: { object: 'list', model: clientModel, results, usage: { searches: 1 } }, usage: null, outputText: '' };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Rerank does not stream.'); },
    error: mapUpstreamError,
  };
}
