/**
 * Image generation (spec 4.14) on a flex image model served as an asynchronous job (Black Forest Labs'
 * `POST /v1/flux-2-flex`, ../shared/specs/bfl): the OpenAI createImage request becomes the vendor's
 * `{prompt, width, height, output_format}`; the job is polled and its image downloaded, measured and
 * stored by the engine (provider manifest `poll.output`), and the answer is an OpenAI ImagesResponse
 * with one image: the gateway's signed URL of the stored output (`response_format: url`, the default)
 * or its bytes inlined (`b64_json`), plus the image's actual `size` and `output_format`.
 *
 * What the flex model takes (spec 4.14 "Flex-type model"): n = 1, output PNG or JPEG, no quality,
 * style, background or output compression: the offering's `params` policies refuse the rest before
 * this; the size rule (explicit, 64..2048 in multiples of 16, at most four 1024x1024 units) is checked
 * here, when the translator is created: still before anything is reserved.
 *
 * For the meters: `image_units`, the returned image's 1024x1024 units, rounded up (spec 4.14: "Billing
 * rounds the actual returned image up"): the actual image, not the requested size.
 */
import { GatewayError } from '../../errors.js';
import { imageUnits } from '../../meters/counters/image-units.js';
import type { GeneratedOutput, Translator, TranslatorOptions } from '../types.js';
import { mapUpstreamError } from '../upstream-error.js';
import { flexSize } from './size.js';

/** Sniffed types and the OpenAI `output_format` name each is. */
const FORMAT_OF: Readonly<Record<string, string>> = { 'image/png': 'png', 'image/jpeg': 'jpeg' };

/** The vendor's validation answer (FastAPI 422 `{detail: [{loc, msg}]}`) as one line, when it has one. */
function detailMessage(body: unknown): string | null {
  const detail = (body as { detail?: unknown } | null)?.detail;
  if (!Array.isArray(detail) || detail.length === 0) return typeof detail === 'string' ? detail.slice(0, 2000) : null;
  const first = detail[0] as { loc?: unknown; msg?: unknown };
  const where = Array.isArray(first.loc) ? first.loc.filter((p) => p !== 'body').join('.') : '';
  return typeof first.msg === 'string' ? `${where ? `${where}: ` : ''}${first.msg}`.slice(0, 2000) : null;
}

/** The one image of the answer, in the form the client asked for. */
function imageItem(output: GeneratedOutput, inline: boolean): Record<string, string> {
  return inline ? { b64_json: output.data.toString('base64') } : { url: output.url };
}

/** Creates the flex-image translator for one request; refuses a size the model does not take. */
export function createNativeJsonToBflFlux(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const model = typeof clientBody.model === 'string' ? clientBody.model : 'the flex model';
  const { width, height } = flexSize(clientBody.size, model);
  const inline = clientBody.response_format === 'b64_json';
  return {
    request(body) {
      // OpenAI's default format is PNG, the vendor's JPEG: sent explicitly, so the client gets what it expects.
      return { prompt: body.prompt, width, height, output_format: typeof body.output_format === 'string' ? body.output_format : 'png' };
    },
    response(_upstream, _clientModel, _headers, outputs) {
      if (outputs?.length !== 1) throw new GatewayError('upstream_error', 'The upstream provider\'s finished job named no image.');
      const output = outputs[0]!;
      const format = FORMAT_OF[output.contentType];
      if (!format || output.width <= 0 || output.height <= 0) throw new GatewayError('upstream_error', 'The upstream provider sent an image that is not a PNG or JPEG.');
      const body: Record<string, unknown> = {
        created: Math.floor(Date.now() / 1000), data: [imageItem(output, inline)], output_format: format, size: `${output.width}x${output.height}`,
      };
      return { body, usage: null, outputText: '', quantities: { image_units: imageUnits(output.width, output.height) } };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Image generations do not stream.'); },
    error(status, body, headers) {
      const mapped = mapUpstreamError(status, body, headers);
      const detail = status === 422 ? detailMessage(body) : null;
      return detail ? new GatewayError('invalid_request', `The upstream provider rejected the request: ${detail}`, { param: null }) : mapped;
    },
  };
}
