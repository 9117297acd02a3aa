/**
 * The native rerank request (spec 4.13) to Cohere's `POST /v2/rerank` (docs/vendors/native-ops.md):
 * documents as strings (an object's `text` is sent as the string: v2 takes no objects), `top_n` as is;
 * the answer's indexes and relevance scores back, with `usage.searches` = 1 (one search unit per
 * request whatever the vendor bills, spec 1). Cohere errors are `{id, message}`.
 */
import type { CompiledOffering } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

type Document = string | { text: string };

interface CohereResult { index?: unknown; relevance_score?: unknown }

function readResults(upstream: Record<string, unknown>, count: number): Array<{ index: number; relevance_score: number }> {
  const results = upstream.results;
  if (!Array.isArray(results)) throw new GatewayError('upstream_error', 'The upstream provider sent a rerank answer without results.');
  return (results as CohereResult[]).map((r) => {
    if (typeof r.index !== 'number' || !Number.isInteger(r.index) || r.index < 0 || r.index >= count || typeof r.relevance_score !== 'number') {
      throw new GatewayError('upstream_error', 'The upstream provider sent a malformed rerank result.');
    }
    return { index: r.index, relevance_score: r.relevance_score };
  });
}

/** Creates the rerank translator for one request. */
export function createNativeJsonToCohereRerank(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const documents = clientBody.documents as Document[];
  return {
    request(body: Record<string, unknown>, offering: CompiledOffering) {
      return {
        model: offering.upstreamModel, query: body.query,
        documents: documents.map((d) => (typeof d === 'string' ? d : d.text)),
        ...(body.top_n !== undefined ? { top_n: body.top_n } : {}),
      };
    },
    response(upstream, clientModel) {
      const results = readResults(upstream, documents.length);
      return { body: { object: 'list', model: clientModel, results, usage: { searches: 1 } }, usage: null, outputText: '' };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Rerank does not stream.'); },
    error: mapUpstreamError,
  };
}
