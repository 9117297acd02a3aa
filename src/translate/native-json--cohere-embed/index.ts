/**
 * The embeddings request (spec 4.15) for the Fast and Pro text-embedding offerings, to Cohere's
 * `POST /v2/embed` (docs/vendors/native-ops.md section 1). Every rule of the 4.15 table is checked
 * when the translator is created, so a request breaking one is refused (400, naming the parameter)
 * before anything is reserved:
 *  - `input`: a nonempty text or a list of 1 to 96 nonempty texts (emptiness: the route's schema);
 *    token-id arrays, data URIs (images) and lists mixing texts and images are refused;
 *  - `dimensions`: 256, 512, 768, 1024, 1536 or 2048; the route's policy defaults it to 1536;
 *  - `encoding_format`: float or base64 (Cohere `embedding_types`);
 *  - `input_type` and `truncate` are refused by the route's policies.
 *
 * Upstream: `texts`, `input_type: search_document` (Cohere requires one for v3 and newer models; the
 * client may not choose it, so every text is embedded as a document, the right side for indexing and
 * the symmetric default), `truncate: NONE` (Cohere errors on over-long input instead of cutting it,
 * and that 400 reaches the client naming `input`, nothing charged), `output_dimension` per the table
 * below. embed-v4.0 gives 256, 512, 1024 or 1536 dimensions; 768 is its 1024-dimension embedding
 * shortened to the first 768 and renormalised to unit length (embed-v4 is trained as a Matryoshka
 * model, whose prefixes are embeddings themselves, as OpenAI's `dimensions` does).
 *
 * 2048 is padded: spec 4.15 requires it, and embed-v4.0 tops out at 1536, so the gateway asks for
 * 1536 and appends 512 zeros to each vector. Every dot product and cosine similarity is exactly that
 * of the 1536-dimension embedding, and the vector stays unit length, so a 2048-wide index gets
 * embed-v4.0's full quality; the padding adds no information (it is not a larger model's embedding).
 * Billing is the same as for 1536: the tokens Cohere bills.
 *
 * Answer: `embeddings.float` (number arrays) or `embeddings.base64` (little-endian float32, the bytes
 * OpenAI's base64 carries) in input order, and `meta.billed_units.input_tokens`, the billed quantity
 * (`input_tokens`); an answer without it or with embeddings of the wrong count or size is malformed:
 * 502, nothing charged. Cohere errors are `{id, message}`.
 */
import { GatewayError } from '../../errors.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

/** Dimensions spec 4.15 lets a client ask for, and the default. */
export const EMBED_DIMENSIONS = [256, 512, 768, 1024, 1536, 2048] as const;
export const DEFAULT_DIMENSIONS = 1536;
/** A dimension of the spec 4.15 table. */
export type EmbedDimension = (typeof EMBED_DIMENSIONS)[number];
/** At most this many texts per request (spec 8; Cohere's own limit too). */
export const MAX_TEXTS = 96;
/**
 * Cohere's `output_dimension` for each dimension of spec 4.15 (embed-v4.0 gives 256, 512, 1024, 1536):
 * 768 is cut from 1024 and renormalised (`shorten`); 2048 is 1536 followed by 512 zeros (`pad`), because
 * embed-v4.0 tops out at 1536: similarities equal the 1536 embedding's, unit length kept, no information added.
 */
const UPSTREAM_DIMENSION: Readonly<Record<EmbedDimension, number>> = { 256: 256, 512: 512, 768: 1024, 1024: 1024, 1536: 1536, 2048: 1536 };
/** The input type every text is embedded with. */
export const INPUT_TYPE = 'search_document';

/** A data URI (RFC 2397): `data:[<mediatype>][;param]*,<data>`; text merely starting with "data:" is not one. */
const DATA_URI = /^\s*data:(?:[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)?(?:;[^,\s]*)*,/i;

function unsupported(param: string, why: string): GatewayError {
  return new GatewayError('unsupported_parameter', `The parameter '${param}' is not supported: ${why}.`, { param });
}

function invalid(param: string, message: string): GatewayError {
  return new GatewayError('invalid_request', message, { param });
}

/** The texts of a request, or the refusal of an input the 4.15 table does not allow. */
export function embedTexts(input: unknown): string[] {
  const list = Array.isArray(input) ? (input as unknown[]) : [input];
  if (!list.every((i) => typeof i === 'string')) {
    throw unsupported('input', 'this model embeds text only; token-id arrays are not accepted, send the text');
  }
  const texts = list as string[];
  if (texts.length > MAX_TEXTS) throw invalid('input', `'input' may hold at most ${MAX_TEXTS} texts for this model (${texts.length} were sent).`);
  if (texts.some((t) => t === '')) throw invalid('input', "'input' must not contain an empty text.");
  const images = texts.filter((t) => DATA_URI.test(t)).length;
  if (images === texts.length) throw unsupported('input', 'this model embeds text only; images (data URIs) are not accepted');
  if (images > 0) throw unsupported('input', 'this model embeds text only; a list mixing texts and images (data URIs) is not accepted');
  return texts;
}

/** The dimension asked for (default 1536) and Cohere's `output_dimension` to get it. */
export function embedDimensions(value: unknown): { requested: number; upstream: number } {
  const requested = value === undefined || value === null ? DEFAULT_DIMENSIONS : value;
  if (typeof requested !== 'number' || !(EMBED_DIMENSIONS as readonly number[]).includes(requested)) {
    throw invalid('dimensions', `'dimensions' must be one of ${EMBED_DIMENSIONS.join(', ')} for this model (default ${DEFAULT_DIMENSIONS}).`);
  }
  return { requested, upstream: UPSTREAM_DIMENSION[requested as EmbedDimension] };
}

/** The first `size` values of a unit vector, scaled back to unit length, as float32 values. */
export function shorten(vector: readonly number[], size: number): number[] {
  const head = vector.slice(0, size).map((v) => Math.fround(v));
  const norm = Math.sqrt(head.reduce((sum, v) => sum + v * v, 0));
  return norm === 0 ? head : head.map((v) => Math.fround(v / norm));
}

/**
 * The vector followed by zeros up to `size` values (2048 from embed-v4.0's 1536): dot products,
 * cosine similarities and the norm are exactly the unpadded vector's; no information is added.
 */
export function pad(vector: readonly number[], size: number): number[] {
  return vector.concat(new Array<number>(Math.max(0, size - vector.length)).fill(0));
}

/** A vector of `size` values from Cohere's: the same, shortened (768) or padded (2048). */
export function resize(vector: readonly number[], size: number): number[] {
  return size < vector.length ? shorten(vector, size) : pad(vector, size);
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Little-endian float32 values of a base64 string, or null when it is not `size` of them. */
export function decodeFloat32(text: string, size: number): number[] | null {
  if (!BASE64.test(text) || text.length % 4 !== 0) return null;
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length !== size * 4) return null;
  const out = new Array<number>(size);
  for (let i = 0; i < size; i++) out[i] = bytes.readFloatLE(i * 4);
  return out;
}

/** Little-endian float32 bytes of `vector`, base64-encoded. */
export function encodeFloat32(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((v, i) => bytes.writeFloatLE(v, i * 4));
  return bytes.toString('base64');
}

function malformed(what: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider sent a malformed embeddings answer (${what}).`);
}

/** Creates the Cohere embed translator for one request; refuses what spec 4.15 does not allow. */
export function createNativeJsonToCohereEmbed(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const texts = embedTexts(clientBody.input);
  const { requested, upstream: dimension } = embedDimensions(clientBody.dimensions);
  const type = clientBody.encoding_format === 'base64' ? 'base64' : 'float';

  /** One embedding in the client's encoding, from Cohere's, checked to hold `dimension` values. */
  const embedding = (value: unknown, i: number): number[] | string => {
    if (type === 'base64') {
      const floats = typeof value === 'string' ? decodeFloat32(value, dimension) : null;
      if (!floats) throw malformed(`embedding ${i} is not ${dimension} float32 values`);
      // Resized (768, 2048) before encoding, so the bytes are the float answer's.
      return requested === dimension ? (value as string) : encodeFloat32(resize(floats, requested));
    }
    if (!Array.isArray(value) || value.length !== dimension || !value.every((v) => typeof v === 'number' && Number.isFinite(v))) {
      throw malformed(`embedding ${i} is not ${dimension} numbers`);
    }
    return requested === dimension ? (value as number[]) : resize(value as number[], requested);
  };

  return {
    request(_body, offering) {
      return { model: offering.upstreamModel, texts, input_type: INPUT_TYPE, embedding_types: [type], output_dimension: dimension, truncate: 'NONE' };
    },
    response(upstream, clientModel) {
      const list = (upstream.embeddings as Record<string, unknown> | undefined)?.[type];
      if (!Array.isArray(list) || list.length !== texts.length) throw malformed(`expected ${texts.length} ${type} embeddings`);
      const billed = (upstream.meta as { billed_units?: { input_tokens?: unknown } } | undefined)?.billed_units?.input_tokens;
      if (typeof billed !== 'number' || !Number.isFinite(billed) || billed < 0) {
        throw new GatewayError('upstream_error', 'The upstream provider did not report the input tokens it billed.');
      }
      const data = list.map((value, index) => ({ object: 'embedding', index, embedding: embedding(value, index) }));
      // Cohere types the count as a number: a fraction would be billed rounded up (the meter's `ceil`), and is shown so.
      const tokens = Math.ceil(billed);
      return {
        body: { object: 'list', data, model: clientModel, usage: { prompt_tokens: tokens, total_tokens: tokens } },
        usage: null, outputText: '', quantities: { input_tokens: billed },
      };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Embeddings do not stream.'); },
    error(status, body, headers) {
      const mapped = mapUpstreamError(status, body, headers);
      // Every field of the upstream request but the texts is the gateway's own choice, so a 400 is about
      // the input (e.g. a text over the model's length: truncate NONE makes that an error, never a cut).
      return status === 400 ? new GatewayError('invalid_request', mapped.message, { param: 'input' }) : mapped;
    },
  };
}
