/**
 * OpenAI's `POST /v1/embeddings` in the simulator: deterministic unit vectors from a hash of each input
 * (the same float32-exact values whether sent as numbers or, with `encoding_format: base64`, as
 * little-endian float32 bytes base64-encoded, as OpenAI does), `usage.prompt_tokens` the o200k tokens
 * of every text (a token-id array counts its ids), and OpenAI-shaped errors for what the API refuses:
 * an unknown model (404), an empty or malformed input, more than 2048 inputs, an input over the
 * model's 8192 tokens, `dimensions` out of the model's range or on a model without it, and unknown
 * fields. Faults as every native JSON route (cohere.ts `sendJsonAnswer`; `omit_usage` drops `usage`).
 */
import { countTextTokens } from '../tokenize.js';
import { float32Base64, sendJsonAnswer, simEmbedding, unknownKey } from './native.js';
import type { SimRoute } from './exchange.js';
import { openaiError, openaiFaultResponse, unparsableJson } from './openai-route.js';
import { isRecord } from './text.js';

/** Embedding models the simulator knows: native size, and whether `dimensions` may shorten it. */
export const OPENAI_EMBED_MODELS: Readonly<Record<string, { dimension: number; shortens: boolean }>> = {
  'text-embedding-3-small': { dimension: 1536, shortens: true },
  'text-embedding-3-large': { dimension: 3072, shortens: true },
  'text-embedding-ada-002': { dimension: 1536, shortens: false },
};
/** Longest input of every model, in tokens. */
export const MAX_INPUT_TOKENS = 8192;
/** Most inputs per request. */
export const MAX_INPUTS = 2048;
const FIELDS = ['model', 'input', 'encoding_format', 'dimensions', 'user'] as const;

type Input = { text: string } | { ids: number[] };
type Check<T> = { ok: true; value: T } | { ok: false; status: number; message: string; param: string | null };
const bad = (message: string, param: string | null = 'input', status = 400) => ({ ok: false as const, status, message, param });

interface EmbeddingsRequest { model: string; inputs: Input[]; dimension: number; base64: boolean }

const isTokenId = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isIds = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every(isTokenId);

function inputsOf(input: unknown): Input[] | null {
  if (typeof input === 'string') return [{ text: input }];
  if (isIds(input)) return [{ ids: input }];
  if (!Array.isArray(input) || input.length === 0) return null;
  if (input.every((i) => typeof i === 'string')) return (input as string[]).map((text) => ({ text }));
  if (input.every(isIds)) return (input as number[][]).map((ids) => ({ ids }));
  return null;
}

/** Validates a `/v1/embeddings` body as the API does. */
export function validateEmbeddings(body: unknown): Check<EmbeddingsRequest> {
  if (!isRecord(body)) return bad('The request body must be a JSON object.', null);
  const extra = unknownKey(body, FIELDS);
  if (extra !== undefined) return bad(`Unrecognized request argument supplied: ${extra}`, extra);
  if (typeof body.model !== 'string') return bad("you must provide a model parameter", 'model');
  const model = OPENAI_EMBED_MODELS[body.model];
  if (!model) return bad(`The model \`${body.model}\` does not exist or you do not have access to it.`, 'model', 404);
  const inputs = inputsOf(body.input);
  if (!inputs) return bad("'input' must be a string, an array of strings, an array of token ids, or an array of token-id arrays, and not empty.");
  if (inputs.length > MAX_INPUTS) return bad(`'input' must have at most ${MAX_INPUTS} items.`);
  if (inputs.some((i) => 'text' in i && i.text === '')) return bad("'input' cannot contain an empty string.");
  for (const input of inputs) {
    const tokens = 'text' in input ? countTextTokens(input.text) : input.ids.length;
    if (tokens > MAX_INPUT_TOKENS) {
      return bad(`This model's maximum context length is ${MAX_INPUT_TOKENS} tokens, however you requested ${tokens} tokens in the input. Please reduce your input.`);
    }
  }
  if (body.encoding_format !== undefined && body.encoding_format !== 'float' && body.encoding_format !== 'base64') {
    return bad("'encoding_format' must be 'float' or 'base64'.", 'encoding_format');
  }
  let dimension = model.dimension;
  if (body.dimensions !== undefined) {
    if (!model.shortens) return bad('This model does not support specifying dimensions.', 'dimensions');
    if (typeof body.dimensions !== 'number' || !Number.isInteger(body.dimensions) || body.dimensions < 1 || body.dimensions > model.dimension) {
      return bad(`'dimensions' must be an integer from 1 to ${model.dimension}.`, 'dimensions');
    }
    dimension = body.dimensions;
  }
  if (body.user !== undefined && typeof body.user !== 'string') return bad("'user' must be a string.", 'user');
  return { ok: true, value: { model: body.model, inputs, dimension, base64: body.encoding_format === 'base64' } };
}

/** The embedding of one input: the model's full vector, shortened to `dimension` and renormalised, as OpenAI does. */
export function openaiEmbedding(model: string, input: Input, dimension: number): number[] {
  const full = simEmbedding(model, 'text' in input ? input.text : `tokens:${input.ids.join(',')}`, OPENAI_EMBED_MODELS[model]!.dimension);
  if (dimension === full.length) return full;
  const head = full.slice(0, dimension);
  const norm = Math.sqrt(head.reduce((s, v) => s + v * v, 0)) || 1;
  return head.map((v) => Math.fround(v / norm));
}

/** The `/v1/embeddings` answer. */
export function answerEmbeddings(req: EmbeddingsRequest, omitUsage: boolean): Record<string, unknown> {
  const data = req.inputs.map((input, index) => {
    const vector = openaiEmbedding(req.model, input, req.dimension);
    return { object: 'embedding', index, embedding: req.base64 ? float32Base64(vector) : vector };
  });
  const tokens = req.inputs.reduce((sum, i) => sum + ('text' in i ? countTextTokens(i.text) : i.ids.length), 0);
  return { object: 'list', data, model: req.model, ...(omitUsage ? {} : { usage: { prompt_tokens: tokens, total_tokens: tokens } }) };
}

/** `POST /v1/embeddings`. */
export const embeddingsRoute: SimRoute = {
  faultResponse: openaiFaultResponse,
  async handle(x) {
    if (!x.parsed) return x.sendJson(400, unparsableJson());
    const valid = validateEmbeddings(x.body);
    if (!valid.ok) return x.sendJson(valid.status, openaiError(valid.message, 'invalid_request_error', valid.param, valid.status === 404 ? 'model_not_found' : null));
    await sendJsonAnswer(x, answerEmbeddings(valid.value, x.fault.omit_usage === true));
  },
};
