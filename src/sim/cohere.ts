/**
 * Cohere's v2 native operations in the simulator (docs/vendors/native-ops.md, spec
 * `shared/specs/cohere/cohere-openapi.yaml`): `POST /v2/embed` and `POST /v2/rerank`, answered
 * deterministically with the vendor's billed units (`meta.billed_units.input_tokens`, `.search_units`),
 * and Cohere-shaped errors `{id, message}`.

 *
 * The simulator never checks credentials (the gateway sends none to it); it rejects what the spec does
 * not allow, and fields the spec does not define (the live service may ignore those: rejecting them
 * makes a misspelt parameter visible, which Prism cannot do since these schemas allow extra fields).
 */
import type http from 'node:http';
import { countTextTokens } from '../tokenize.js';
import type { Exchange, SimRoute } from './exchange.js';
import { float32Base64, isPositiveInt, seededUuid, sendJsonAnswer, simEmbedding, unknownKey } from './native.js';
import { bodyHash, isRecord, type Rec } from './text.js';

// ---------------------------------------------------------------------------------------------------
// Errors

/** Cohere's error body `{id, message}` (every error response of the spec has this schema). */
export function cohereError(message: string, raw: string): { id: string; message: string } {
  return { id: seededUuid(`error:${raw}`), message };
}

const FAULT_MESSAGES: Record<number, string> = {
  400: 'invalid request (simulated)', 401: 'invalid api token (simulated)', 403: 'forbidden (simulated)',
  404: 'model not found (simulated)', 422: 'unprocessable entity (simulated)',
  429: 'You are using a Trial key, which is limited to 40 API calls / minute (simulated).',
  498: 'invalid api token (simulated)', 499: 'request cancelled (simulated)', 500: 'internal server error (simulated)',
  501: 'not implemented (simulated)', 503: 'service unavailable (simulated)', 504: 'gateway timeout (simulated)',
};

/** The Cohere-shaped body and headers for a fault status (429 carries retry-after: 7). */
export function cohereFaultResponse(status: number, raw: string): { body: unknown; headers: http.OutgoingHttpHeaders } {
  const message = FAULT_MESSAGES[status] ?? `simulated error (status ${status})`;
  return { body: cohereError(message, raw), headers: status === 429 ? { 'retry-after': '7' } : {} };
}

const API_VERSION = { version: '2' } as const;

/** Cohere's embedding models the simulator knows (an unknown id is a 404, as at Cohere). */
export const EMBED_MODELS = ['embed-v4.0', 'embed-english-v3.0', 'embed-english-light-v3.0', 'embed-multilingual-v3.0', 'embed-multilingual-light-v3.0'] as const;
/** Cohere's rerank models the simulator knows. */
export const RERANK_MODELS = ['rerank-v4.0-pro', 'rerank-v4.0-fast', 'rerank-v3.5', 'rerank-english-v3.0', 'rerank-multilingual-v3.0'] as const;

const modelNotFound = (model: string) => bad404(`model '${model}' not found, make sure the correct model ID was used and that you have access to the model.`);
const bad404 = (message: string) => ({ ok: false as const, status: 404, message });

// ---------------------------------------------------------------------------------------------------
// POST /v2/embed

/** Request fields the spec defines for `POST /v2/embed` (V2EmbedRequest). */
const EMBED_FIELDS = ['texts', 'images', 'model', 'input_type', 'inputs', 'max_tokens', 'output_dimension', 'embedding_types', 'truncate', 'priority'] as const;
export const EMBED_INPUT_TYPES = ['search_document', 'search_query', 'classification', 'clustering', 'image'] as const;
export const EMBEDDING_TYPES = ['float', 'int8', 'uint8', 'binary', 'ubinary', 'base64'] as const;
/** `output_dimension` values the spec lists ("only available for embed-v4 and newer models"). */
export const OUTPUT_DIMENSIONS = [256, 512, 1024, 1536] as const;
/** At most this many texts per call (spec: `maxItems: 96`). */
export const MAX_EMBED_TEXTS = 96;

type EmbeddingType = (typeof EMBEDDING_TYPES)[number];

/** The model family facts the simulator uses: default dimension and longest input in tokens. */
export function embedModelInfo(model: string): { v3: boolean; dimension: number; maxTokens: number } {
  const v3 = /v[23]\.\d/.test(model) && !/v[4-9]\./.test(model);
  if (v3) return { v3, dimension: /light/.test(model) ? 384 : 1024, maxTokens: 512 };
  return { v3, dimension: 1536, maxTokens: 128_000 };
}

function encode(vector: number[], type: EmbeddingType): unknown {
  switch (type) {
    case 'float': return vector;
    case 'base64': return float32Base64(vector);
    case 'int8': return vector.map((v) => Math.max(-128, Math.min(127, Math.round(v * 127))));
    case 'uint8': return vector.map((v) => Math.max(0, Math.min(255, Math.round((v + 1) * 127.5))));
    case 'ubinary':
    case 'binary': {
      const bytes: number[] = [];
      for (let i = 0; i < vector.length; i += 8) {
        let byte = 0;
        for (let b = 0; b < 8; b++) byte = (byte << 1) | ((vector[i + b] ?? 0) > 0 ? 1 : 0);
        bytes.push(type === 'binary' ? byte - 128 : byte);
      }
      return bytes;
    }
  }
}

type Check<T> = { ok: true; value: T } | { ok: false; status: number; message: string };
const bad = (message: string, status = 400) => ({ ok: false as const, status, message: `invalid request: ${message}` });

interface EmbedRequest {
  model: string;
  texts: string[];
  types: EmbeddingType[];
  dimension: number;
  /** Tokens embedded per text (after truncation). */
  limit: number;
  truncate: 'NONE' | 'START' | 'END';
}

/** Validates a `/v2/embed` body the way the spec and its descriptions say. */
export function validateEmbed(body: unknown): Check<EmbedRequest> {
  if (!isRecord(body)) return bad('body must be a JSON object');
  const extra = unknownKey(body, EMBED_FIELDS);
  if (extra !== undefined) return bad(`unknown field: ${extra}`);
  if (typeof body.model !== 'string' || body.model === '') return bad('model must be specified');
  if (!(EMBED_MODELS as readonly string[]).includes(body.model)) return modelNotFound(body.model);
  if (body.input_type === undefined) return bad('input_type must be specified');
  if (!(EMBED_INPUT_TYPES as readonly unknown[]).includes(body.input_type)) return bad(`input_type must be one of ${EMBED_INPUT_TYPES.join(', ')}`);
  if (body.images !== undefined || body.inputs !== undefined) return bad('images and inputs are not simulated: send texts', 501);
  const texts = body.texts;
  if (!Array.isArray(texts) || texts.length === 0) return bad('texts must be a non-empty array of strings');
  if (texts.length > MAX_EMBED_TEXTS) return bad(`texts must have at most ${MAX_EMBED_TEXTS} elements, got ${texts.length}`);
  if (!texts.every((t) => typeof t === 'string')) return bad('texts must be strings');
  if (texts.some((t) => t === '')) return bad('texts must not contain empty strings');
  const info = embedModelInfo(body.model);
  let dimension = info.dimension;
  if (body.output_dimension !== undefined) {
    if (info.v3) return bad(`output_dimension is only available for embed-v4 and newer models, not ${body.model}`);
    if (!(OUTPUT_DIMENSIONS as readonly unknown[]).includes(body.output_dimension)) return bad(`output_dimension must be one of ${OUTPUT_DIMENSIONS.join(', ')}`);
    dimension = body.output_dimension as number;
  }
  const rawTypes = body.embedding_types ?? ['float'];
  if (!Array.isArray(rawTypes) || rawTypes.length === 0 || !rawTypes.every((t) => (EMBEDDING_TYPES as readonly unknown[]).includes(t))) {
    return bad(`embedding_types must be a non-empty array of ${EMBEDDING_TYPES.join(', ')}`);
  }
  const truncate = body.truncate ?? 'END';
  if (truncate !== 'NONE' && truncate !== 'START' && truncate !== 'END') return bad('truncate must be one of NONE, START, END');
  if (body.max_tokens !== undefined && !isPositiveInt(body.max_tokens)) return bad('max_tokens must be a positive integer');
  if (body.priority !== undefined && !(Number.isInteger(body.priority) && (body.priority as number) >= 0 && (body.priority as number) <= 999)) return bad('priority must be an integer from 0 to 999');
  const limit = Math.min(info.maxTokens, (body.max_tokens as number | undefined) ?? Infinity);
  return { ok: true, value: { model: body.model, texts: texts as string[], types: [...new Set(rawTypes as EmbeddingType[])], dimension, limit, truncate } };
}

/** The `/v2/embed` answer: embeddings by type, `texts` echoed, `meta.billed_units.input_tokens`. */
export function answerEmbed(req: EmbedRequest, raw: string, omitUsage: boolean): Check<Rec> {
  let billed = 0;
  for (const [i, text] of req.texts.entries()) {
    const tokens = countTextTokens(text);
    if (tokens > req.limit && req.truncate === 'NONE') {
      return bad(`texts[${i}] has ${tokens} tokens, more than the maximum of ${req.limit} (truncate is NONE)`);
    }
    billed += Math.min(tokens, req.limit);
  }
  const vectors = req.texts.map((t) => simEmbedding(req.model, t, req.dimension));
  const embeddings: Rec = {};
  for (const type of req.types) embeddings[type] = vectors.map((v) => encode(v, type));
  const meta: Rec = { api_version: API_VERSION };
  if (!omitUsage) meta.billed_units = { input_tokens: billed };
  return { ok: true, value: { id: seededUuid(raw), embeddings, texts: req.texts, meta, response_type: 'embeddings_by_type' } };
}

// ---------------------------------------------------------------------------------------------------
// POST /v2/rerank

const RERANK_FIELDS = ['model', 'query', 'documents', 'top_n', 'max_tokens_per_doc', 'priority'] as const;
/** Cohere pricing: one search unit is one query with up to 100 documents... */
export const DOCUMENTS_PER_SEARCH_UNIT = 100;
/** ...and a document longer than 500 tokens together with the query counts as one document per 500-token chunk. */
export const SEARCH_CHUNK_TOKENS = 500;
/** Hard cap of the simulator (the spec only "recommends against sending more than 1,000 documents"). */
export const MAX_RERANK_DOCUMENTS = 10_000;

interface RerankRequest { model: string; query: string; documents: string[]; topN: number }

/** Validates a `/v2/rerank` body (documents are strings in v2). */
export function validateRerank(body: unknown): Check<RerankRequest> {
  if (!isRecord(body)) return bad('body must be a JSON object');
  const extra = unknownKey(body, RERANK_FIELDS);
  if (extra !== undefined) return bad(`unknown field: ${extra}`);
  if (typeof body.model !== 'string' || body.model === '') return bad('model must be specified');
  if (!(RERANK_MODELS as readonly string[]).includes(body.model)) return modelNotFound(body.model);
  if (typeof body.query !== 'string') return bad('query must be a string');
  if (body.query.trim() === '') return bad('query must not be empty');
  const docs = body.documents;
  if (!Array.isArray(docs) || docs.length === 0) return bad('documents must be a non-empty array of strings');
  if (docs.length > MAX_RERANK_DOCUMENTS) return bad(`documents must have at most ${MAX_RERANK_DOCUMENTS} elements`);
  if (!docs.every((d) => typeof d === 'string')) return bad('documents must be strings (v2 takes no objects)');
  if (body.top_n !== undefined && !isPositiveInt(body.top_n)) return bad('top_n must be an integer >= 1');
  if (body.max_tokens_per_doc !== undefined && !isPositiveInt(body.max_tokens_per_doc)) return bad('max_tokens_per_doc must be a positive integer');
  if (body.priority !== undefined && !(Number.isInteger(body.priority) && (body.priority as number) >= 0 && (body.priority as number) <= 999)) return bad('priority must be an integer from 0 to 999');
  return { ok: true, value: { model: body.model, query: body.query, documents: docs as string[], topN: Math.min((body.top_n as number | undefined) ?? docs.length, docs.length) } };
}

const words = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Relevance in [0, 1]: the share of the query's distinct words found in the document, plus a stable tie-breaker. */
export function relevance(query: string, document: string): number {
  const q = new Set(words(query));
  const d = new Set(words(document));
  let hits = 0;
  for (const w of q) if (d.has(w)) hits += 1;
  const share = q.size === 0 ? 0 : hits / q.size;
  const jitter = parseInt(bodyHash(`${query}\u0000${document}`).slice(0, 6), 16) / 0xffffff; // [0, 1]
  return Math.round((0.05 + 0.9 * share + 0.05 * jitter) * 1e6) / 1e6;
}

/** Search units Cohere bills for a query and its documents (pricing FAQ; not in the spec). */
export function searchUnits(query: string, documents: readonly string[]): number {
  const queryTokens = countTextTokens(query);
  let chunks = 0;
  for (const d of documents) chunks += Math.max(1, Math.ceil((queryTokens + countTextTokens(d)) / SEARCH_CHUNK_TOKENS));
  return Math.max(1, Math.ceil(chunks / DOCUMENTS_PER_SEARCH_UNIT));
}

/** The `/v2/rerank` answer: `results` by relevance (ties by index), cut to top_n, and `meta.billed_units.search_units`. */
export function answerRerank(req: RerankRequest, raw: string, omitUsage: boolean): Rec {
  const scored = req.documents.map((d, index) => ({ index, relevance_score: relevance(req.query, d) }));
  scored.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  const meta: Rec = { api_version: API_VERSION };
  if (!omitUsage) meta.billed_units = { search_units: searchUnits(req.query, req.documents) };
  return { id: seededUuid(raw), results: scored.slice(0, req.topN), meta };
}

// ---------------------------------------------------------------------------------------------------
// Routes

const fail = (x: Exchange, status: number, message: string) => x.sendJson(status, cohereError(message, x.raw));

/** `POST /v2/embed`. */
export const cohereEmbedRoute: SimRoute = {
  faultResponse: cohereFaultResponse,
  async handle(x) {
    if (!x.parsed) return fail(x, 400, 'invalid request: body must be valid JSON');
    const valid = validateEmbed(x.body);
    if (!valid.ok) return fail(x, valid.status, valid.message);
    const answer = answerEmbed(valid.value, x.raw, x.fault.omit_usage === true);
    if (!answer.ok) return fail(x, answer.status, answer.message);
    await sendJsonAnswer(x, answer.value);
  },
};

/** `POST /v2/rerank`. */
export const cohereRerankRoute: SimRoute = {
  faultResponse: cohereFaultResponse,
  async handle(x) {
    if (!x.parsed) return fail(x, 400, 'invalid request: body must be valid JSON');
    const valid = validateRerank(x.body);
    if (!valid.ok) return fail(x, valid.status, valid.message);
    await sendJsonAnswer(x, answerRerank(valid.value, x.raw, x.fault.omit_usage === true));
  },
};
