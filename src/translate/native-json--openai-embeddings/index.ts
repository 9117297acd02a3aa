/**
 * The embeddings request (spec 4.15) to an OpenAI-format `POST /embeddings`: the identity, with the
 * gateway's model id swapped for the upstream's. Texts and token arrays are carried as OpenAI takes
 * them; `encoding_format`, `dimensions` and `user` as sent (the upstream validates its own model's
 * limits; its 400 charges nothing). The answer's `usage.prompt_tokens` is the billed quantity
 * (`input_tokens`, priced at the offering's input price); an answer without it, or whose embeddings
 * do not match the inputs, is malformed: 502, nothing charged.
 */
import { GatewayError } from '../../errors.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

/** Parameters carried upstream (the route's schema admits no others; input_type and truncate are refused by policy). */
const CARRIED = ['input', 'encoding_format', 'dimensions', 'user'] as const;

const isTokenId = (v: unknown): boolean => typeof v === 'number' && Number.isInteger(v) && v >= 0;
const isTokenArray = (v: unknown): boolean => Array.isArray(v) && v.length > 0 && v.every(isTokenId);

/**
 * How many embeddings `input` asks for: one per text, one for a token-id array, one per token-id
 * array of a list. A list mixing kinds (texts with token ids) is refused, as OpenAI does.
 */
export function embeddingInputCount(input: unknown): number {
  if (typeof input === 'string' || isTokenArray(input)) return 1;
  if (Array.isArray(input) && (input.every((i) => typeof i === 'string') || input.every(isTokenArray))) return input.length;
  throw new GatewayError('invalid_request', "'input' must be a text, a list of texts, a list of token ids, or a list of token-id lists (not a mix of them).", { param: 'input' });
}

function malformed(what: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider sent a malformed embeddings answer (${what}).`);
}

interface UpstreamItem { index?: unknown; embedding?: unknown }

/** Creates the OpenAI-format embeddings translator for one request. */
export function createNativeJsonToOpenaiEmbeddings(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const count = embeddingInputCount(clientBody.input);
  const base64 = clientBody.encoding_format === 'base64';
  return {
    request(body, offering) {
      const out: Record<string, unknown> = { model: offering.upstreamModel };
      for (const name of CARRIED) if (body[name] !== undefined && body[name] !== null) out[name] = body[name];
      return out;
    },
    response(upstream, clientModel) {
      const data = upstream.data;
      if (!Array.isArray(data) || data.length !== count) throw malformed(`expected ${count} embeddings`);
      const items = (data as UpstreamItem[]).map((item, i) => {
        const index = item?.index ?? i;
        const embedding = item?.embedding;
        const valid = base64 ? typeof embedding === 'string' : Array.isArray(embedding) && embedding.every((x) => typeof x === 'number');
        if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || !valid) throw malformed(`item ${i}`);
        return { object: 'embedding', index, embedding };
      });
      const usage = upstream.usage as { prompt_tokens?: unknown } | undefined;
      const tokens = usage?.prompt_tokens;
      if (typeof tokens !== 'number' || !Number.isSafeInteger(tokens) || tokens < 0) {
        throw new GatewayError('upstream_error', 'The upstream provider did not report the input tokens of the embeddings.');
      }
      return {
        body: { object: 'list', data: items, model: clientModel, usage: { prompt_tokens: tokens, total_tokens: tokens } },
        usage: null, outputText: '', quantities: { input_tokens: tokens },
      };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Embeddings do not stream.'); },
    error: mapUpstreamError,
  };
}
