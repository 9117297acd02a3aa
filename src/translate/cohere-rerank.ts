/**
 * What both rerank translators to Cohere's `POST /v2/rerank` share (the native route, spec 4.13, and
 * Cohere's own shape, issue 31 item 11): the upstream request (documents as texts, `top_n` and
 * `max_tokens_per_doc` when set, `null` as absent) and the results read back, each with its
 * `document` ({text}, from the request: the v2 API returns none) when the client set `return_documents`.
 */
import type { CompiledOffering } from '../config/types.js';
import { GatewayError } from '../errors.js';

/** A document as a client sends it: a text, or an object with `text`. */
export type RerankDocument = string | { text: string };

/** One ranked result as the client gets it. */
export interface RerankResult { index: number; relevance_score: number; document?: { text: string } }

const text = (d: RerankDocument): string => (typeof d === 'string' ? d : d.text);

/** The `/v2/rerank` body for a client request (its optional fields `null` or absent are left out). */
export function cohereRerankRequest(body: Record<string, unknown>, documents: readonly RerankDocument[], offering: CompiledOffering): Record<string, unknown> {
  const out: Record<string, unknown> = { model: offering.upstreamModel, query: body.query, documents: documents.map(text) };
  for (const name of ['top_n', 'max_tokens_per_doc', 'priority']) if (body[name] !== undefined && body[name] !== null) out[name] = body[name];
  return out;
}

/** The upstream's results, checked (an index outside the documents, or no score, is a malformed answer: 502). */
export function readRerankResults(upstream: Record<string, unknown>, documents: readonly RerankDocument[], returnDocuments: boolean): RerankResult[] {
  const results = upstream.results;
  if (!Array.isArray(results)) throw new GatewayError('upstream_error', 'The upstream provider sent a rerank answer without results.');
  return (results as Array<{ index?: unknown; relevance_score?: unknown }>).map((r) => {
    if (typeof r.index !== 'number' || !Number.isInteger(r.index) || r.index < 0 || r.index >= documents.length || typeof r.relevance_score !== 'number') {
      throw new GatewayError('upstream_error', 'The upstream provider sent a malformed rerank result.');
    }
    return { index: r.index, relevance_score: r.relevance_score, ...(returnDocuments ? { document: { text: text(documents[r.index]!) } } : {}) };
  });
}
