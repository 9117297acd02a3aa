/**
 * What the two Azure AI Content Safety translators share (spec 4.11; docs/vendors/native-ops.md
 * section 3, docs/vendors/anthropic-files.md section 3): `text:analyze` and `image:analyze` answer
 * the same `categoriesAnalysis[{category, severity?}]`, turned into the route's one moderation
 * response whatever the input, with `usage.records` = 1: one record per call, text or image (spec 1;
 * the meter's constant). Content Safety errors are Azure.Core `{error: {code, message}}`.
 */
import { GatewayError } from '../errors.js';
import type { TranslatedAnswer, Translator } from './types.js';
import { mapUpstreamError } from './upstream-error.js';

interface CategoryAnalysis { category?: unknown; severity?: unknown }

function malformed(): GatewayError {
  return new GatewayError('upstream_error', 'The upstream provider sent a malformed moderation answer.');
}

/** The client's moderation answer (schemas/native-json/moderation-response.json); a malformed one is the upstream's fault (502). */
export function moderationAnswer(upstream: Record<string, unknown>, clientModel: string): TranslatedAnswer {
  const analysis = upstream.categoriesAnalysis;
  if (!Array.isArray(analysis)) throw malformed();
  const categories = (analysis as CategoryAnalysis[]).map((c) => {
    if (!c || typeof c.category !== 'string' || (c.severity !== undefined && (typeof c.severity !== 'number' || !Number.isInteger(c.severity)))) throw malformed();
    return { category: c.category, severity: c.severity ?? null };
  });
  return { body: { object: 'moderation', model: clientModel, categories_analysis: categories, usage: { records: 1 } }, usage: null, outputText: '' };
}

/** A Content Safety translator from its upstream request builder: the answer, errors and the refusal to stream are shared. */
export function contentSafetyTranslator(request: Translator['request']): Translator {
  return {
    request,
    response: moderationAnswer,
    stream: () => { throw new GatewayError('invalid_request', 'Moderation does not stream.'); },
    error: mapUpstreamError,
  };
}

/** `categories` when the client named them (absent: the vendor scores all four). */
export function categoriesOf(body: Record<string, unknown>): { categories?: unknown } {
  return body.categories !== undefined ? { categories: body.categories } : {};
}
