/**
 * OpenAI's image generation in the simulator (spec 4.14; vendor spec createImage, ImagesResponse):
 * `POST /v1/images/generations` answers deterministically: one tiny valid PNG per image (1x1, its
 * colour from a hash of the model, prompt and index; PNG bytes whatever `output_format` asks, which
 * the answer echoes), as `b64_json`, or for dall-e-3 and dall-e-2 with
 * `response_format: url` (their default) as a URL on this simulator, `GET /v1/sim-images/<seed>.png`,
 * which serves the same PNG. gpt-image-1 answers report `usage` (input: the prompt's o200k tokens;
 * output: OpenAI's per-image token table by quality and size, times n) and echo background, format,
 * size and quality. OpenAI-shaped 400s for what each model refuses (the vendor spec's per-model
 * rules), 404 for an unknown model. Faults as every native JSON route; `omit_usage` drops `usage`.
 */
import { deflateSync } from 'node:zlib';
import type { SimMatch } from './azure-content-safety.js';
import type { RawRequest } from './anthropic-files.js';
import { sendBytes } from './anthropic-files.js';
import type { SimRoute } from './exchange.js';
import { sendJsonAnswer, unknownKey } from './native.js';
import { openaiError, openaiFaultResponse, unparsableJson } from './openai-route.js';
import { bodyHash, isRecord, type Rec } from './text.js';
import { countTextTokens } from '../tokenize.js';

/** What a model accepts: values per parameter (absent: the parameter is refused), n and prompt limits. */
interface ImageModel { maxN: number; maxPrompt: number; values: Readonly<Record<string, readonly unknown[]>> }

/** The models the simulator knows, with the vendor spec's per-model values (CreateImageRequest). */
export const SIM_IMAGE_MODELS: Readonly<Record<string, ImageModel>> = {
  'gpt-image-1': {
    maxN: 10, maxPrompt: 32000,
    values: {
      size: ['1024x1024', '1536x1024', '1024x1536', 'auto'], quality: ['low', 'medium', 'high', 'auto'],
      background: ['transparent', 'opaque', 'auto'], output_format: ['png', 'jpeg', 'webp'], moderation: ['low', 'auto'],
    },
  },
  'dall-e-2': {
    maxN: 10, maxPrompt: 1000,
    values: { size: ['256x256', '512x512', '1024x1024'], quality: ['standard'], response_format: ['url', 'b64_json'] },
  },
  'dall-e-3': {
    maxN: 1, maxPrompt: 4000,
    values: { size: ['1024x1024', '1792x1024', '1024x1792'], quality: ['standard', 'hd'], style: ['vivid', 'natural'], response_format: ['url', 'b64_json'] },
  },
};

/**
 * Output tokens of one gpt-image-1 image by quality and size (OpenAI's image generation guide);
 * `auto` quality counts as medium, `auto` size as 1024x1024.
 */
export const OUTPUT_TOKENS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  low: { '1024x1024': 272, '1024x1536': 408, '1536x1024': 400 },
  medium: { '1024x1024': 1056, '1024x1536': 1584, '1536x1024': 1568 },
  high: { '1024x1024': 4160, '1024x1536': 6240, '1536x1024': 6208 },
};

/** The path prefix the simulator serves generated images under. */
export const SIM_IMAGES_PATH = '/v1/sim-images/';
const FIELDS = ['model', 'prompt', 'n', 'size', 'quality', 'style', 'response_format', 'background', 'output_format', 'output_compression', 'moderation', 'user'] as const;
/** The answers' fixed `created` (deterministic). */
export const SIM_IMAGES_CREATED = 1_745_000_000;

type Check = { ok: true; model: string; spec: ImageModel } | { ok: false; status: number; message: string; param: string | null };
const bad = (message: string, param: string | null, status = 400) => ({ ok: false as const, status, message, param });

/** Validates a createImage body as the API does. */
export function validateImages(body: unknown): Check {
  if (!isRecord(body)) return bad('The request body must be a JSON object.', null);
  const extra = unknownKey(body, FIELDS);
  if (extra !== undefined) return bad(`Unrecognized request argument supplied: ${extra}`, extra);
  const model = body.model ?? 'dall-e-2';
  const spec = typeof model === 'string' ? SIM_IMAGE_MODELS[model] : undefined;
  if (!spec) return bad(`The model \`${String(model)}\` does not exist or you do not have access to it.`, 'model', 404);
  if (typeof body.prompt !== 'string' || body.prompt === '') return bad("'prompt' is required and must be a non-empty string.", 'prompt');
  if (body.prompt.length > spec.maxPrompt) return bad(`'prompt' is too long: at most ${spec.maxPrompt} characters.`, 'prompt');
  const n = body.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > spec.maxN) return bad(`'n' must be an integer from 1 to ${spec.maxN} for ${model}.`, 'n');
  for (const name of ['size', 'quality', 'style', 'response_format', 'background', 'output_format', 'moderation'] as const) {
    const value = body[name];
    if (value === undefined || value === null) continue;
    const allowed = spec.values[name];
    if (!allowed) return bad(`'${name}' is not supported for ${model}.`, name);
    if (!allowed.includes(value)) return bad(`Invalid value for '${name}': ${JSON.stringify(value)}. Supported values for ${model}: ${allowed.join(', ')}.`, name);
  }
  const compression = body.output_compression;
  if (compression !== undefined && compression !== null) {
    if (!spec.values.output_format) return bad(`'output_compression' is not supported for ${model}.`, 'output_compression');
    if (typeof compression !== 'number' || !Number.isInteger(compression) || compression < 0 || compression > 100) return bad("'output_compression' must be an integer from 0 to 100.", 'output_compression');
  }
  if (body.user !== undefined && typeof body.user !== 'string') return bad("'user' must be a string.", 'user');
  return { ok: true, model: model as string, spec };
}

/** CRC-32 (PNG's chunk checksum). */
function crc32(data: Buffer): number {
  let c = ~0;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(4);
  head.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([head, body, crc]);
}

/** A valid 1x1 RGB PNG whose colour is the seed's first six hex digits. */
export function simPng(seed: string): Buffer {
  const rgb = Buffer.from(seed.slice(0, 6).padEnd(6, '0'), 'hex');
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr), chunk('IDAT', deflateSync(Buffer.concat([Buffer.from([0]), rgb]))), chunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * The createImage (or createImageEdit) answer for a valid request; `origin` is this simulator's base
 * URL (for DALL-E URLs); `salt` varies the images (an edit's inputs).
 */
export function answerImages(body: Rec, model: string, origin: string, omitUsage: boolean, salt = ''): Rec {
  const n = typeof body.n === 'number' ? body.n : 1;
  const prompt = body.prompt as string;
  const seeds = Array.from({ length: n }, (_, i) => bodyHash(`${model}\n${prompt}\n${i}${salt}`).slice(0, 16));
  if (model === 'dall-e-3' || model === 'dall-e-2') {
    const url = body.response_format !== 'b64_json';
    const revised = model === 'dall-e-3' ? { revised_prompt: prompt } : {};
    const data = seeds.map((s) => ({ ...(url ? { url: `${origin}${SIM_IMAGES_PATH}${s}.png` } : { b64_json: simPng(s).toString('base64') }), ...revised }));
    return { created: SIM_IMAGES_CREATED, data };
  }
  const quality = body.quality === 'low' || body.quality === 'high' ? body.quality : 'medium';
  const size = typeof body.size === 'string' && body.size !== 'auto' ? body.size : '1024x1024';
  const input = countTextTokens(prompt);
  const output = OUTPUT_TOKENS[quality]![size]! * n;
  const background = body.background === 'transparent' ? 'transparent' : 'opaque';
  const usage = { input_tokens: input, output_tokens: output, total_tokens: input + output, input_tokens_details: { text_tokens: input, image_tokens: 0 } };
  return {
    created: SIM_IMAGES_CREATED, data: seeds.map((s) => ({ b64_json: simPng(s).toString('base64') })),
    background, output_format: body.output_format ?? 'png', size, quality, ...(omitUsage ? {} : { usage }),
  };
}

/** `POST /v1/images/generations`. */
export const imagesRoute: SimRoute = {
  faultResponse: openaiFaultResponse,
  async handle(x) {
    if (!x.parsed) return x.sendJson(400, unparsableJson());
    const valid = validateImages(x.body);
    if (!valid.ok) return x.sendJson(valid.status, openaiError(valid.message, 'invalid_request_error', valid.param, valid.status === 404 ? 'model_not_found' : null));
    const origin = `http://${x.headers.host ?? '127.0.0.1'}`;
    await sendJsonAnswer(x, answerImages(x.body as Rec, valid.model, origin, x.fault.omit_usage === true));
  },
};

/** Serves `GET /v1/sim-images/<seed>.png` (the URLs of dall-e-3 answers); faults scope by `openai-images-file`. */
export function matchSimImages(method: string, url: URL, raw: RawRequest): SimMatch | undefined {
  const m = /^\/v1\/sim-images\/([0-9a-f]{16})\.png$/.exec(url.pathname);
  if (method !== 'GET' || !m) return undefined;
  return { faultKey: 'openai-images-file', route: { faultResponse: openaiFaultResponse, handle: (x) => sendBytes(raw.sink, x.fault, simPng(m[1]!), { 'content-type': 'image/png' }) } };
}
