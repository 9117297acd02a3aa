/**
 * Cohere's own embed shape (issue 31 item 11: `POST /v2/embed`, what `CohereClientV2.embed` sends) to
 * Cohere's `POST /v2/embed`: texts only (the route's schema: 1 to 96 nonempty texts, an input type),
 * the client's `embedding_types`, `output_dimension`, `max_tokens`, `truncate` and `priority` as
 * sent (`null` as absent), the model the offering's upstream id. The answer is Cohere's
 * (EmbedByTypeResponse), checked: every requested type with one embedding per text, and
 * `meta.billed_units.input_tokens`, the billed quantity (`input_tokens`, billed as reported, rounded
 * up by the meter); a malformed answer is a 502, nothing charged. Cohere errors are `{id, message}`.
 */
import { GatewayError } from '../../errors.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

/** Optional request fields passed on as sent. */
const PASSED = ['output_dimension', 'max_tokens', 'truncate', 'priority'] as const;

function malformed(what: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider sent a malformed embed answer (${what}).`);
}

/** Creates the Cohere-shaped embed translator for one request. */
export function createCohereToCohereEmbed(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const texts = clientBody.texts as string[];
  const types = Array.isArray(clientBody.embedding_types) ? (clientBody.embedding_types as string[]) : ['float'];
  return {
    request(body, offering) {
      const out: Record<string, unknown> = { model: offering.upstreamModel, texts, input_type: body.input_type, embedding_types: types };
      for (const name of PASSED) if (body[name] !== undefined && body[name] !== null) out[name] = body[name];
      return out;
    },
    response(upstream) {
      const all = upstream.embeddings as Record<string, unknown> | undefined;
      const embeddings: Record<string, unknown[]> = {};
      for (const type of types) {
        const list = all?.[type];
        if (!Array.isArray(list) || list.length !== texts.length) throw malformed(`expected ${texts.length} ${type} embeddings`);
        embeddings[type] = list;
      }
      const billed = (upstream.meta as { billed_units?: { input_tokens?: unknown } } | undefined)?.billed_units?.input_tokens;
      if (typeof billed !== 'number' || !Number.isFinite(billed) || billed < 0) throw new GatewayError('upstream_error', 'The upstream provider did not report the input tokens it billed.');
      if (typeof upstream.id !== 'string') throw malformed('no id');
      return {
        body: { id: upstream.id, response_type: 'embeddings_by_type', embeddings, texts, meta: { api_version: { version: '2' }, billed_units: { input_tokens: billed } } },
        usage: null, outputText: '', quantities: { input_tokens: billed },
      };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Embed does not stream.'); },
    error: mapUpstreamError,
  };
}
