/**
 * OpenAI's `POST /v1/moderations` in the simulator (../shared/specs/openai CreateModerationRequest,
 * CreateModerationResponse; issue 31 item 10): one result per text (a list of parts is one input),
 * each category scored deterministically from a hash of the input, a category flagged when its score
 * is over 0.5 or the text names it plainly ("kill" is violence, ...), and, on omni models,
 * `category_applied_input_types` (images are scored for the categories OpenAI scores them for).
 * OpenAI-shaped errors for what the API refuses: an unknown model (404), a missing or malformed input,
 * images on a text-only model, unknown fields. Moderation reports no usage (OpenAI does not bill it).
 */
import { seededUuid, sendJsonAnswer, unknownKey } from './native.js';
import type { SimRoute } from './exchange.js';
import { openaiError, openaiFaultResponse, unparsableJson } from './openai-route.js';
import { bodyHash, isRecord } from './text.js';

/** OpenAI's moderation models; the omni ones take images too. */
export const MODERATION_MODELS: Readonly<Record<string, { omni: boolean }>> = {
  'omni-moderation-latest': { omni: true }, 'omni-moderation-2024-09-26': { omni: true },
  'text-moderation-latest': { omni: false }, 'text-moderation-stable': { omni: false },
};

/** Every category of the response schema. */
export const CATEGORIES = [
  'hate', 'hate/threatening', 'harassment', 'harassment/threatening', 'illicit', 'illicit/violent', 'self-harm',
  'self-harm/intent', 'self-harm/instructions', 'sexual', 'sexual/minors', 'violence', 'violence/graphic',
] as const;

/** The categories OpenAI scores images for (the others apply to text only). */
export const IMAGE_CATEGORIES: ReadonlySet<string> = new Set(['self-harm', 'self-harm/intent', 'self-harm/instructions', 'sexual', 'violence', 'violence/graphic']);

/** Words that flag a category outright, so tests can ask for a flagged answer. */
const FLAG_WORDS: Readonly<Record<string, RegExp>> = { violence: /\bkill\b/i, hate: /\bhate\b/i, 'self-harm': /\bhurt myself\b/i };

type Part = { type: 'text'; text: string } | { type: 'image_url'; url: string };
type Check<T> = { ok: true; value: T } | { ok: false; status: number; message: string; param: string | null };
const bad = (message: string, param: string | null = 'input', status = 400) => ({ ok: false as const, status, message, param });

/** One input as parts; null when it is not one of the three forms. */
function partsOf(item: unknown): Part | null {
  if (!isRecord(item)) return null;
  if (item.type === 'text' && typeof item.text === 'string') return { type: 'text', text: item.text };
  const url = isRecord(item.image_url) ? item.image_url.url : undefined;
  if (item.type === 'image_url' && typeof url === 'string' && url.length > 0) return { type: 'image_url', url };
  return null;
}

/** The inputs to score, each a list of parts. */
function inputsOf(input: unknown): Part[][] | null {
  if (typeof input === 'string') return [[{ type: 'text', text: input }]];
  if (!Array.isArray(input) || input.length === 0) return null;
  if (input.every((i) => typeof i === 'string')) return (input as string[]).map((text) => [{ type: 'text', text }]);
  const parts = input.map(partsOf);
  return parts.every((p): p is Part => p !== null) ? [parts] : null;
}

/** Validates a `/v1/moderations` body as the API does. */
export function validateModeration(body: unknown): Check<{ model: string; omni: boolean; inputs: Part[][] }> {
  if (!isRecord(body)) return bad('The request body must be a JSON object.', null);
  const extra = unknownKey(body, ['input', 'model']);
  if (extra !== undefined) return bad(`Unrecognized request argument supplied: ${extra}`, extra);
  const model = typeof body.model === 'string' ? body.model : 'omni-moderation-latest';
  const known = MODERATION_MODELS[model];
  if (!known) return bad(`The model \`${model}\` does not exist or you do not have access to it.`, 'model', 404);
  const inputs = inputsOf(body.input);
  if (!inputs) return bad("'input' must be a string, an array of strings, or an array of text and image_url parts.");
  if (!known.omni && inputs.some((parts) => parts.some((p) => p.type === 'image_url'))) return bad(`The model \`${model}\` does not take images.`);
  return { ok: true, value: { model, omni: known.omni, inputs } };
}

/** A score in [0, 1) for a category of one input, from its hash (low, so most inputs are not flagged). */
function score(parts: Part[], category: string): number {
  const h = bodyHash(`${category}\u0000${JSON.stringify(parts)}`);
  return (parseInt(h.slice(0, 6), 16) / 0x1000000) * 0.2;
}

/** One moderation result for an input. */
function result(parts: Part[], omni: boolean): Record<string, unknown> {
  const text = parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text).join('\n');
  const image = parts.some((p) => p.type === 'image_url');
  const categories: Record<string, boolean> = {};
  const scores: Record<string, number> = {};
  const applied: Record<string, string[]> = {};
  for (const c of CATEGORIES) {
    scores[c] = FLAG_WORDS[c]?.test(text) ? 0.9 : score(parts, c);
    categories[c] = scores[c]! > 0.5;
    applied[c] = [...(text ? ['text'] : []), ...(image && IMAGE_CATEGORIES.has(c) ? ['image'] : [])];
  }
  return { flagged: Object.values(categories).some(Boolean), categories, category_scores: scores, ...(omni ? { category_applied_input_types: applied } : {}) };
}

/** `POST /v1/moderations`. */
export const moderationsRoute: SimRoute = {
  faultResponse: openaiFaultResponse,
  async handle(x) {
    if (!x.parsed) return x.sendJson(400, unparsableJson());
    const valid = validateModeration(x.body);
    if (!valid.ok) return x.sendJson(valid.status, openaiError(valid.message, 'invalid_request_error', valid.param, valid.status === 404 ? 'model_not_found' : null));
    const { model, omni, inputs } = valid.value;
    await sendJsonAnswer(x, { id: `modr-${seededUuid(x.raw).replace(/-/g, '')}`, model, results: inputs.map((parts) => result(parts, omni)) });
  },
};
