/**
 * OpenAI's image edits in the simulator (spec 4.14; vendor spec createImageEdit, ImagesResponse):
 * `POST /v1/images/edits`, multipart with `model` (default dall-e-2), `prompt`, the input images as
 * `image` (one) or repeated `image[]`, an optional PNG `mask` and the edit parameters. Validated as
 * the API documents it: gpt-image-1 takes 1 to 16 PNG, JPEG or WebP images and `input_fidelity`;
 * dall-e-2 one square PNG under 4 MB; dall-e-3 cannot edit (400 naming `model`). The answer is the
 * generation's (src/sim/openai-images.ts, the images varied by the inputs' bytes); gpt-image-1's
 * `usage` adds image input tokens for each input image (SIM_EDIT_IMAGE_TOKENS by input_fidelity,
 * the mask not counted), reported in `input_tokens_details.image_tokens`. Faults are keyed by the
 * form's `model`.
 */
import { Busboy } from '@fastify/busboy';
import { imageDimensions, imageFormat } from '../files/verify/dimensions.js';
import type { SimMatch } from './azure-content-safety.js';
import type { RawRequest } from './anthropic-files.js';
import type { Exchange, SimRoute } from './exchange.js';
import { sendJsonAnswer } from './native.js';
import { answerImages, SIM_IMAGE_MODELS, validateImages } from './openai-images.js';
import { openaiError, openaiFaultResponse } from './openai-route.js';
import { bodyHash, type Rec } from './text.js';

/** Image input tokens the simulator reports per input image of a gpt-image-1 edit, by input_fidelity. */
export const SIM_EDIT_IMAGE_TOKENS: Readonly<Record<'low' | 'high', number>> = { low: 388, high: 4548 };
/** The models that can edit, with their input limits (createImageEdit's descriptions). */
const EDIT_MODELS: Readonly<Record<string, { maxImages: number; maxBytes: number; formats: readonly string[]; square: boolean }>> = {
  'gpt-image-1': { maxImages: 16, maxBytes: 50 * 1024 * 1024, formats: ['png', 'jpeg', 'webp'], square: false },
  'dall-e-2': { maxImages: 1, maxBytes: 4 * 1024 * 1024, formats: ['png'], square: true },
};
const FIELDS = ['model', 'prompt', 'n', 'size', 'quality', 'response_format', 'background', 'output_format', 'output_compression', 'input_fidelity', 'user', 'stream', 'partial_images'];
const NUMBERS = new Set(['n', 'output_compression']);

/** A parsed edit form. */
export interface EditForm { fields: Record<string, string>; images: Buffer[]; mask: Buffer | null; error?: string }

/** Reads the form: text fields (last value wins), `image`/`image[]` files in order, the mask. */
export function parseEditForm(bytes: Buffer, contentType: string | undefined): Promise<EditForm> {
  return new Promise((resolve) => {
    const form: EditForm = { fields: {}, images: [], mask: null };
    let parser: ReturnType<typeof Busboy>;
    try { parser = Busboy({ headers: { 'content-type': contentType ?? '' } }); } catch {
      resolve({ ...form, error: 'Content-Type must be multipart/form-data with a boundary.' });
      return;
    }
    const pending: Array<Promise<void>> = [];
    parser.on('field', (name, value) => { form.fields[name] = value; });
    parser.on('file', (name, stream) => {
      const chunks: Buffer[] = [];
      pending.push(new Promise((done) => {
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const data = Buffer.concat(chunks);
          if (name === 'image' || name === 'image[]') form.images.push(data);
          else if (name === 'mask') form.mask = data;
          else form.error ??= `Unrecognized file part: ${name}`;
          done();
        });
      }));
    });
    parser.on('error', () => resolve({ ...form, error: 'The multipart body is malformed.' }));
    parser.on('finish', () => { void Promise.all(pending).then(() => resolve(form)); });
    parser.end(bytes);
  });
}

type Bad = { ok: false; message: string; param: string | null; status?: number };
const bad = (message: string, param: string | null, status?: number): Bad => ({ ok: false, message, param, ...(status ? { status } : {}) });

/** The form's fields as a createImage-like body (numbers parsed), or what is wrong with it. */
function editBody(form: EditForm): { ok: true; body: Rec } | Bad {
  const extra = Object.keys(form.fields).find((k) => !FIELDS.includes(k));
  if (extra) return bad(`Unrecognized request argument supplied: ${extra}`, extra);
  const body: Rec = {};
  for (const [name, value] of Object.entries(form.fields)) {
    if (!NUMBERS.has(name)) { body[name] = value; continue; }
    const number = Number(value);
    if (!Number.isInteger(number)) return bad(`Invalid type for '${name}': expected an integer.`, name);
    body[name] = number;
  }
  return { ok: true, body };
}

/** Checks the input images against the model's limits. */
function checkImages(form: EditForm, model: string): Bad | null {
  const spec = EDIT_MODELS[model];
  if (!spec) return bad(`Invalid model ${model}. The model must be one of: ${Object.keys(EDIT_MODELS).join(', ')}.`, 'model');
  if (form.images.length === 0) return bad("Missing required parameter: 'image'.", 'image');
  if (form.images.length > spec.maxImages) return bad(`At most ${spec.maxImages} image(s) for ${model}.`, 'image');
  for (const image of form.images) {
    const format = imageFormat(image);
    if (!format || !spec.formats.includes(format)) return bad(`Invalid image file. Supported formats for ${model}: ${spec.formats.join(', ')}.`, 'image');
    if (image.length >= spec.maxBytes) return bad(`Image too large: under ${spec.maxBytes} bytes for ${model}.`, 'image');
    const size = imageDimensions(image);
    if (spec.square && size && size.width !== size.height) return bad('Uploaded image must be square.', 'image');
  }
  if (form.mask && imageFormat(form.mask) !== 'png') return bad('Invalid mask file: it must be a PNG.', 'mask');
  return null;
}

/** Validates an edit as the API does: the body and model to answer, or the refusal. */
export function validateEdit(form: EditForm): { ok: true; body: Rec; model: string } | Bad {
  if (form.error) return bad(form.error, null);
  const parsed = editBody(form);
  if (!parsed.ok) return parsed;
  const { input_fidelity: fidelity, ...rest } = parsed.body;
  const model = typeof rest.model === 'string' ? rest.model : 'dall-e-2';
  if (!SIM_IMAGE_MODELS[model]) return bad(`The model \`${model}\` does not exist or you do not have access to it.`, 'model', 404);
  const images = checkImages(form, model);
  if (images) return images;
  if (fidelity !== undefined && (model !== 'gpt-image-1' || (fidelity !== 'high' && fidelity !== 'low'))) return bad(`Invalid value for 'input_fidelity' on ${model}.`, 'input_fidelity');
  // The output controls are createImage's, per model (n, size, quality, formats, prompt length).
  const values = validateImages({ ...rest, model });
  if (!values.ok) return bad(values.message, values.param, values.status === 400 ? undefined : values.status);
  return { ok: true, body: parsed.body, model };
}

/** Adds the input images' tokens to a gpt-image-1 answer's usage. */
function withImageTokens(answer: Rec, images: number, fidelity: unknown): Rec {
  const usage = answer.usage as { input_tokens: number; output_tokens: number; input_tokens_details: { text_tokens: number } } | undefined;
  if (!usage) return answer;
  const image = images * SIM_EDIT_IMAGE_TOKENS[fidelity === 'high' ? 'high' : 'low'];
  const input = usage.input_tokens + image;
  return { ...answer, usage: { input_tokens: input, output_tokens: usage.output_tokens, total_tokens: input + usage.output_tokens, input_tokens_details: { text_tokens: usage.input_tokens_details.text_tokens, image_tokens: image } } };
}

function editRoute(raw: RawRequest): SimRoute {
  return {
    faultResponse: openaiFaultResponse,
    async handle(x: Exchange) {
      const form = await parseEditForm(raw.bytes, x.headers['content-type']);
      const valid = validateEdit(form);
      if (!valid.ok) {
        const status = valid.status ?? 400;
        return x.sendJson(status, openaiError(valid.message, 'invalid_request_error', valid.param, status === 404 ? 'model_not_found' : null));
      }
      const salt = `\n${bodyHash(Buffer.concat(form.images).toString('latin1')).slice(0, 16)}`;
      const answer = answerImages(valid.body, valid.model, `http://${x.headers.host ?? '127.0.0.1'}`, x.fault.omit_usage === true, salt);
      await sendJsonAnswer(x, withImageTokens(answer, form.images.length, valid.body.input_fidelity));
    },
  };
}

/** `POST /v1/images/edits`, faults keyed by the form's model. */
export function matchOpenaiImageEdits(method: string, url: URL, raw: RawRequest): SimMatch | undefined {
  if (method !== 'POST' || url.pathname !== '/v1/images/edits') return undefined;
  // The form's `model` field, read without parsing the whole body (the fault key is needed first).
  const model = /name="model"\r\n(?:[^\r\n]*\r\n)*?\r\n([^\r\n]*)\r\n/.exec(raw.bytes.toString('latin1'))?.[1] ?? 'openai-images';
  return { route: editRoute(raw), faultKey: model };
}
