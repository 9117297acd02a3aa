/**
 * Image edits (spec 4.14) to OpenAI's `POST /images/edits` (createImageEdit): a multipart FormData
 * with the gateway's model id swapped for the upstream's, the input images, the optional mask and the
 * edit parameters as text fields. OpenAI declares `image` as one binary or an array of binaries
 * (CreateImageEditRequest); the official SDK sends an array as repeated `image[]` parts and a single
 * file as `image`, and so does this translator, whatever spelling the client used (a temporary file
 * put into the part by `file_inputs` is one `image`). What each model accepts (values, how many and
 * which files) was checked before this by the route's and the offering's policies, so nothing here
 * is dropped or clamped.
 *
 * The answer is an ImagesResponse, carried and metered exactly as a generation's
 * (native-json--openai-images): token usage for a token-billed offering (the reported image input
 * tokens apart, at their own price), the number of images for a per-image one.
 */
import { Blob } from 'node:buffer';
import { FormData } from 'undici';
import { GatewayError } from '../../errors.js';
import type { UploadedFile } from '../../bodies/multipart.js';
import { createNativeJsonToOpenaiImages } from '../native-json--openai-images/index.js';
import type { Translator, TranslatorOptions } from '../types.js';

/** Text fields carried upstream as sent (the route's schema admits no others; style is refused by policy). */
const CARRIED = ['prompt', 'n', 'size', 'quality', 'response_format', 'background', 'output_format', 'output_compression', 'input_fidelity', 'user'] as const;

function appendFile(form: FormData, name: string, file: UploadedFile, fallback: string): void {
  form.append(name, new Blob([file.data], { type: file.contentType || 'application/octet-stream' }), file.filename || fallback);
}

/** The createImageEdit form of one request. */
export function imageEditForm(body: Record<string, unknown>, upstreamModel: string, files: readonly UploadedFile[]): FormData {
  const images = files.filter((f) => f.field === 'image');
  if (images.length === 0) throw new GatewayError('invalid_request', "Missing required file part 'image'.", { param: 'image' });
  const form = new FormData();
  form.append('model', upstreamModel);
  // One image as `image`, several as `image[]` each: the two spellings OpenAI's createImageEdit takes.
  const name = images.length === 1 ? 'image' : 'image[]';
  images.forEach((image, i) => appendFile(form, name, image, `image-${i + 1}.png`));
  const mask = files.find((f) => f.field === 'mask');
  if (mask) appendFile(form, 'mask', mask, 'mask.png');
  for (const field of CARRIED) if (body[field] !== undefined && body[field] !== null) form.append(field, String(body[field]));
  return form;
}

/** Creates the OpenAI-format image-edit translator for one request. */
export function createNativeJsonToOpenaiImageEdits(clientBody: Record<string, unknown>, options?: TranslatorOptions): Translator {
  const answers = createNativeJsonToOpenaiImages(clientBody, options);
  return {
    ...answers,
    request(body, offering, files = []) {
      // Tells the answer side whether the offering bills reported tokens (the JSON it builds is unused).
      answers.request(body, offering, files);
      return imageEditForm(body, offering.upstreamModel, files);
    },
    stream: () => { throw new GatewayError('invalid_request', 'Image edits do not stream.'); },
  };
}
