/**
 * Image generation (spec 4.14) to OpenAI's `POST /images/generations` (createImage): the request as
 * the client sent it, with the gateway's model id swapped for the upstream's. What each model accepts
 * (sizes, qualities, styles, formats, n) was checked before this by the route's and the offering's
 * parameter policies (`allow`, `unsupported: reject`), so nothing here is dropped or clamped.
 *
 * The answer (ImagesResponse) is carried field by field: `created`, one `data` item per image
 * (`b64_json` or `url`, and dall-e-3's `revised_prompt`), the echoed `background`, `output_format`,
 * `size` and `quality`, and `usage`. What it reports for the meters (spec 1, "Images: reported tokens,
 * output image, or output megapixel"): `usage` as token usage (input tokens at the input price, output
 * tokens at the output price) for a token-billed offering, which must report it; `images`, the number
 * of images returned, for a per-image offering. An answer with no image, more images than `n`, an item
 * with neither `b64_json` nor `url`, or a token-billed answer without usage is malformed: 502, nothing
 * charged.
 */
import { GatewayError } from '../../errors.js';
import type { TokenUsage, Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';

/** Parameters carried upstream as sent (the route's schema admits no others; input_fidelity is refused by policy). */
const CARRIED = ['prompt', 'n', 'size', 'quality', 'style', 'response_format', 'background', 'output_format', 'output_compression', 'user'] as const;
/** Answer fields echoed to the client when the upstream sets them. */
const ECHOED = ['background', 'output_format', 'size', 'quality'] as const;

function malformed(what: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider sent a malformed images answer (${what}).`);
}

const count = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/**
 * The token usage of an ImagesResponse `usage` (ImageGenUsage); null when absent. Reported image
 * input tokens (`input_tokens_details.image_tokens`, an edit's input images) are a subset of the
 * input, priced at the offering's image-input price; more of them than input tokens is malformed.
 */
export function imagesUsage(usage: unknown): TokenUsage | null {
  if (usage === undefined || usage === null) return null;
  const { input_tokens: input, output_tokens: output, input_tokens_details: details } = (typeof usage === 'object' ? usage : {}) as Record<string, unknown>;
  if (!count(input) || !count(output)) throw malformed('usage');
  const image = details !== null && typeof details === 'object' ? (details as Record<string, unknown>).image_tokens : undefined;
  if (image !== undefined && (!count(image) || image > input)) throw malformed('usage image_tokens');
  return { input, output, cachedInput: 0, cacheWrite: 0, reasoning: 0, ...(image ? { imageInput: image } : {}) };
}

interface UpstreamImage { b64_json?: unknown; url?: unknown; revised_prompt?: unknown }

/** One image of the answer, with only the fields the client format has. */
function imageItem(item: UpstreamImage | null, i: number): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof item?.b64_json === 'string' && item.b64_json !== '') out.b64_json = item.b64_json;
  if (typeof item?.url === 'string' && item.url !== '') out.url = item.url;
  if (out.b64_json === undefined && out.url === undefined) throw malformed(`image ${i} has neither b64_json nor url`);
  if (typeof item?.revised_prompt === 'string') out.revised_prompt = item.revised_prompt;
  return out;
}

/** Creates the OpenAI-format image-generation translator for one request. */
export function createNativeJsonToOpenaiImages(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const asked = typeof clientBody.n === 'number' ? clientBody.n : 1;
  // Set by request(): whether the offering bills reported tokens (then the answer must report them).
  let tokenBilled = false;
  return {
    request(body, offering) {
      tokenBilled = offering.billing.unit === 'token';
      const out: Record<string, unknown> = { model: offering.upstreamModel };
      for (const name of CARRIED) if (body[name] !== undefined && body[name] !== null) out[name] = body[name];
      return out;
    },
    response(upstream) {
      const data = upstream.data;
      if (!Array.isArray(data) || data.length === 0 || data.length > asked) throw malformed(`expected 1 to ${asked} images`);
      const items = (data as Array<UpstreamImage | null>).map(imageItem);
      const usage = imagesUsage(upstream.usage);
      if (tokenBilled && !usage) throw new GatewayError('upstream_error', 'The upstream provider did not report the token usage of the images.');
      const body: Record<string, unknown> = { created: count(upstream.created) ? upstream.created : Math.floor(Date.now() / 1000), data: items };
      for (const name of ECHOED) if (typeof upstream[name] === 'string') body[name] = upstream[name];
      if (usage) body.usage = upstream.usage;
      return { body, usage, outputText: '', quantities: { images: items.length } };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Image generations do not stream.'); },
    error: mapUpstreamError,
  };
}
