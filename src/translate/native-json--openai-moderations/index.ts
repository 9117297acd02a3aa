/**
 * OpenAI's own moderation shape on POST /v1/moderations (issue 31 item 10), to OpenAI's
 * `POST /v1/moderations` (../shared/specs/openai CreateModerationRequest): `input` (a text, a list of
 * texts, or a list of `text` / `image_url` parts) and `model` go as they are, the model the offering's
 * upstream id. The answer is OpenAI's (`id`, `model`, `results` with `flagged`, `categories`,
 * `category_scores` and, for omni models, `category_applied_input_types`), its `model` the client's
 * id. The spec's own shape (`text`, `image`, `file_id`, `categories`; spec 4.11) goes to the other
 * upstreams of the route; the body shape picks which (routes/moderations.yaml). Billing: one record
 * per call, as every moderation (spec 1), at the offering's price (OpenAI's moderation is free).
 */
import { GatewayError } from '../../errors.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

function malformed(what: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider sent a malformed moderation answer (${what}).`);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** How many results the input asks for: one per text or list item (OpenAI scores a list of parts as one input). */
export function moderationInputCount(input: unknown): number {
  if (typeof input === 'string') return 1;
  if (Array.isArray(input) && input.every((i) => typeof i === 'string')) return input.length;
  return 1;
}

/** The results of an upstream answer, checked to be OpenAI's moderation objects, `count` of them. */
function readResults(upstream: Record<string, unknown>, count: number): unknown[] {
  const results = upstream.results;
  if (!Array.isArray(results) || results.length !== count) throw malformed(`expected ${count} results`);
  for (const r of results) {
    if (!isObject(r) || typeof r.flagged !== 'boolean' || !isObject(r.categories) || !isObject(r.category_scores)) throw malformed('a result without flagged, categories or category_scores');
  }
  return results;
}

/** Creates the OpenAI moderation translator for one request. */
export function createNativeJsonToOpenaiModerations(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  // The spec's own fields belong to its shape; mixed into OpenAI's they would be ignored, so they are refused.
  for (const field of ['categories', 'text', 'image', 'file_id']) {
    if (clientBody[field] !== undefined) {
      throw new GatewayError('unsupported_parameter', `The parameter '${field}' is not accepted with 'input' (OpenAI's moderation shape); send 'text', 'image' or 'file_id' without 'input' for the gateway's own shape.`, { param: field });
    }
  }
  const count = moderationInputCount(clientBody.input);
  return {
    request(body, offering) {
      return { model: offering.upstreamModel, input: body.input };
    },
    response(upstream, clientModel) {
      const results = readResults(upstream, count);
      if (typeof upstream.id !== 'string') throw malformed('no id');
      return { body: { id: upstream.id, model: clientModel, results }, usage: null, outputText: '' };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Moderation does not stream.'); },
    error: mapUpstreamError,
  };
}
