/**
 * Azure AI Vision Image Analysis 4.0 in the simulator (spec
 * `shared/specs/azure/image-analysis/generated.json`, api-version 2023-10-01):
 * `POST /computervision/imageanalysis:analyze?api-version=2023-10-01&features=...` with the image as the
 * raw body (`application/octet-stream`; the JSON `{url}` form is refused: the simulator fetches
 * nothing, and the gateway must never hand a vendor a URL). It checks the query as the spec defines it
 * (`features` one comma-separated value of the `VisualFeatures` names, at least one; `language`,
 * `gender-neutral-caption`, `smartcrops-aspect-ratios` 0.75 to 1.8, `model-version`), that the bytes
 * are an image the 4.0 service takes (JPEG, PNG, GIF, BMP, WEBP or TIFF by magic bytes, at most
 * 20,971,520 bytes, 50 to 16,000 pixels a side, the size read from the header), and answers an
 * `ImageAnalysisResult` holding exactly the requested features, derived from the SHA-256 of the bytes
 * (the caption and the text read carry its first 8 hex digits, so a test can tell the bytes arrived
 * intact). An `Ocp-Apim-Subscription-Key` header is accepted (never checked: the gateway sends none to
 * the simulator); an empty one is a 401. Faults scope by `azure-image-analysis`.
 */
import { createHash } from 'node:crypto';
import { imageDimensions, imageFormat } from '../files/verify/dimensions.js';
import type { RawRequest } from './anthropic-files.js';
import { azureFaultResponse, checkApiVersion, sendAzureError, type SimMatch } from './azure-content-safety.js';
import type { Exchange } from './exchange.js';
import { sendJsonAnswer } from './native.js';
import type { Rec } from './text.js';

export const IMAGE_ANALYSIS_API_VERSION = '2023-10-01';
export const IMAGE_ANALYSIS_PATH = '/computervision/imageanalysis:analyze';
/** The spec's `VisualFeatures`. */
export const SIM_VISUAL_FEATURES = ['tags', 'caption', 'denseCaptions', 'objects', 'read', 'smartCrops', 'people'] as const;
/** "The image size is not allowed to be zero or larger than 20971520 bytes" (the service's 400). */
export const MAX_ANALYSIS_BYTES = 20_971_520;
export const ANALYSIS_SIDE = { min: 50, max: 16_000 } as const;

type Feature = (typeof SIM_VISUAL_FEATURES)[number];
interface Size { width: number; height: number }
/** The spec's `ImageBoundingBox`. */
interface Box { x: number; y: number; w: number; h: number }
interface Options { features: Feature[]; genderNeutral: boolean; ratios: number[] | null; modelVersion: string }

/** A TIFF's first image directory: ImageWidth (256) and ImageLength (257), SHORT or LONG. */
function tiffSize(b: Buffer): Size | undefined {
  const le = b.toString('latin1', 0, 2) === 'II';
  const u16 = (at: number) => (le ? b.readUInt16LE(at) : b.readUInt16BE(at));
  const u32 = (at: number) => (le ? b.readUInt32LE(at) : b.readUInt32BE(at));
  if (b.length < 8) return undefined;
  const ifd = u32(4);
  if (ifd + 2 > b.length) return undefined;
  const size: Partial<Size> = {};
  for (let i = 0, n = u16(ifd); i < n && ifd + 2 + i * 12 + 12 <= b.length; i++) {
    const at = ifd + 2 + i * 12;
    const value = u16(at + 2) === 3 ? u16(at + 8) : u32(at + 8);
    if (u16(at) === 256) size.width = value;
    if (u16(at) === 257) size.height = value;
  }
  return size.width && size.height ? { width: size.width, height: size.height } : undefined;
}

/** The image's pixel size, or a reason it is not an image the service takes. */
function measure(bytes: Buffer): Size | string {
  if (bytes.length === 0 || bytes.length > MAX_ANALYSIS_BYTES) return `The image size is not allowed to be zero or larger than ${MAX_ANALYSIS_BYTES} bytes.`;
  const format = imageFormat(bytes);
  if (!format) return 'The image format is not supported (JPEG, PNG, GIF, BMP, WEBP or TIFF).';
  const size = imageDimensions(bytes) ?? (format === 'tiff' ? tiffSize(bytes) : undefined);
  if (!size) return 'The image header cannot be read.';
  if (Math.min(size.width, size.height) < ANALYSIS_SIDE.min || Math.max(size.width, size.height) > ANALYSIS_SIDE.max) {
    return `The image dimension is not allowed to be smaller than ${ANALYSIS_SIDE.min} and larger than ${ANALYSIS_SIDE.max}.`;
  }
  return size;
}

/** The query as the spec defines it, or what is wrong with it. */
function readQuery(url: URL): Options | string {
  const q = url.searchParams;
  const features = q.getAll('features');
  if (features.length !== 1) return "The query parameter 'features' is required once (a comma-separated list).";
  const names = features[0]!.split(',');
  const unknown = names.find((n) => !(SIM_VISUAL_FEATURES as readonly string[]).includes(n));
  if (unknown !== undefined) return `The feature '${unknown}' is not supported; use ${SIM_VISUAL_FEATURES.join(', ')}.`;
  const language = q.get('language');
  if (language !== null && language.length < 2) return "'language' must be a language code of at least 2 characters.";
  const neutral = q.get('gender-neutral-caption');
  if (neutral !== null && neutral !== 'true' && neutral !== 'false') return "'gender-neutral-caption' must be true or false.";
  const rawRatios = q.get('smartcrops-aspect-ratios');
  const ratios = rawRatios === null ? null : rawRatios.split(',').map(Number);
  if (ratios && !ratios.every((r) => Number.isFinite(r) && r >= 0.75 && r <= 1.8)) return "'smartcrops-aspect-ratios' must be numbers from 0.75 to 1.8.";
  const modelVersion = q.get('model-version') ?? 'latest';
  if (!/^(latest|\d{4}-\d{2}-\d{2})(-preview)?$/.test(modelVersion)) return "'model-version' must be latest or YYYY-MM-DD (optionally -preview).";
  return { features: [...new Set(names as Feature[])], genderNeutral: neutral === 'true', ratios, modelVersion };
}

/** A confidence from one byte of the digest: 0.5 to 1, four decimals. */
const confidence = (digest: Buffer, at: number): number => Math.round((0.5 + digest[at % digest.length]! / 510) * 10_000) / 10_000;

/** A box inside the image: the centred `fraction` of each side. */
function centred(size: Size, fraction: number): Box {
  const w = Math.max(1, Math.floor(size.width * fraction));
  const h = Math.max(1, Math.floor(size.height * fraction));
  return { x: Math.floor((size.width - w) / 2), y: Math.floor((size.height - h) / 2), w, h };
}

/** The corners of a box, clockwise from the top left. */
function corners({ x, y, w, h }: Box): Rec[] {
  return [{ x, y }, { x: x + w, y }, { x: x + w, y: y + h }, { x, y: y + h }];
}

/** The largest centred crop at `ratio` (width / height). */
function crop(size: Size, ratio: number): Rec {
  const w = Math.min(size.width, Math.floor(size.height * ratio));
  const h = Math.min(size.height, Math.floor(w / ratio));
  return { aspectRatio: Math.round((w / h) * 100) / 100, boundingBox: { x: Math.floor((size.width - w) / 2), y: Math.floor((size.height - h) / 2), w, h } };
}

/** The result of each feature for an image. */
function results(size: Size, digest: Buffer, o: Options): Record<Feature, [string, unknown]> {
  const id = digest.toString('hex').slice(0, 8);
  const whole = { x: 0, y: 0, w: size.width, h: size.height };
  const line = centred(size, 0.5);
  const half = { ...line, w: Math.max(1, Math.floor(line.w / 2)) };
  const second = { ...half, x: half.x + half.w };
  const caption = `${o.genderNeutral ? 'a person' : 'a man'} standing in front of a grey wall (${id})`;
  // With no ratio asked, one region at the ratio the service sees fit (0.5 to 2.0): the image's own.
  const ratios = o.ratios ?? [Math.min(2, Math.max(0.5, size.width / size.height))];
  return {
    caption: ['captionResult', { text: caption, confidence: confidence(digest, 0) }],
    denseCaptions: ['denseCaptionsResult', { values: [{ text: caption, confidence: confidence(digest, 1), boundingBox: whole }] }],
    read: ['readResult', {
      blocks: [{ lines: [{ text: `SIM ${id}`, boundingPolygon: corners(line), words: [
        { text: 'SIM', boundingPolygon: corners(half), confidence: confidence(digest, 2) },
        { text: id, boundingPolygon: corners(second), confidence: confidence(digest, 3) },
      ] }] }],
    }],
    tags: ['tagsResult', { values: [{ name: 'wall', confidence: confidence(digest, 4) }, { name: 'indoor', confidence: confidence(digest, 5) }, { name: 'grey', confidence: confidence(digest, 6) }] }],
    objects: ['objectsResult', { values: [{ boundingBox: centred(size, 0.6), tags: [{ name: 'person', confidence: confidence(digest, 7) }] }] }],
    people: ['peopleResult', { values: [{ boundingBox: centred(size, 0.6), confidence: confidence(digest, 8) }] }],
    smartCrops: ['smartCropsResult', { values: ratios.map((r) => crop(size, r)) }],
  };
}

async function analyze(x: Exchange, url: URL, raw: RawRequest): Promise<void> {
  const fail = (message: string, inner?: string) => sendAzureError(x, 400, 'InvalidRequest', message, inner ? { code: inner, message } : undefined);
  const key = x.headers['ocp-apim-subscription-key'];
  if (key !== undefined && String(key).trim() === '') {
    return sendAzureError(x, 401, '401', 'Access denied due to invalid subscription key or wrong API endpoint.');
  }
  const options = readQuery(url);
  if (typeof options === 'string') return fail(options, 'InvalidParameter');
  const type = String(x.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') return fail('The simulator analyses image bytes only (application/octet-stream); it fetches no URL.', 'InvalidImageUrl');
  if (type !== 'application/octet-stream') return sendAzureError(x, 415, 'UnsupportedMediaType', `Content-Type '${type}' is not supported; send application/octet-stream.`);
  const size = measure(raw.bytes);
  if (typeof size === 'string') return fail(size, size.includes('dimension') ? 'InvalidImageSize' : 'InvalidImageFormat');
  const digest = createHash('sha256').update(raw.bytes).digest();
  const all = results(size, digest, options);
  const answer: Rec = {
    modelVersion: options.modelVersion === 'latest' ? IMAGE_ANALYSIS_API_VERSION : options.modelVersion,
    metadata: { width: size.width, height: size.height },
  };
  for (const feature of options.features) answer[all[feature][0]] = all[feature][1];
  await sendJsonAnswer(x, answer);
}

/** `POST /computervision/imageanalysis:analyze` (`?api-version=2023-10-01`), over the request's raw bytes. */
export function matchImageAnalysis(method: string, url: URL, raw: RawRequest): SimMatch | undefined {
  if (method !== 'POST' || url.pathname !== IMAGE_ANALYSIS_PATH) return undefined;
  return {
    faultKey: 'azure-image-analysis',
    route: {
      faultResponse: azureFaultResponse,
      async handle(x) {
        if (!checkApiVersion(x, url, IMAGE_ANALYSIS_API_VERSION)) return;
        await analyze(x, url, raw);
      },
    },
  };
}
