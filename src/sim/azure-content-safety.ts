/**
 * Azure AI Content Safety in the simulator (docs/vendors/native-ops.md, spec
 * `shared/specs/azure/content-safety/contentsafety.json`, api-version 2024-09-01):
 * `POST /contentsafety/text:analyze?api-version=2024-09-01` answers `categoriesAnalysis[{category, severity}]`
 * with severities derived from trigger words, so answers vary with the text;
 * `POST /contentsafety/image:analyze` (same api-version) answers the same shape for a base64 image
 * (PNG, JPEG, GIF, BMP, TIFF or WEBP by magic bytes, at most 4 MB, 50 to 2048 pixels a side where the
 * header tells) with severities 0, 2, 4, 6 derived from a hash of its bytes. The service reports no
 * billed quantity (the gateway bills one record per call).
 *
 * Also what the Azure routes share: the Azure.Core error body `{error: {code, message, innererror?}}`
 * with its `x-ms-error-code` header, fault bodies in that shape, the `api-version` check, and `SimMatch`,
 * the result of a URL matcher (Azure routes need the query string or a path parameter, so server.ts
 * matches them by method and URL; `faultKey` scopes faults: `POST /__sim/faults {model: "<faultKey>"}`).
 */
import { createHash } from 'node:crypto';
import type http from 'node:http';
import { imageDimensions, imageFormat } from '../files/verify/dimensions.js';
import { sendJsonAnswer, unknownKey } from './native.js';
import type { Exchange, SimRoute } from './exchange.js';
import { isRecord, type Rec } from './text.js';

// ---------------------------------------------------------------------------------------------------
// Shared by the Azure routes

/** A matched native route and the name faults are scoped by (Azure bodies carry no `model`). */
export interface SimMatch { route: SimRoute; faultKey: string }

/** The Azure.Core error body (`Azure.Core.Foundations.ErrorResponse`). */
export function azureError(code: string, message: string, inner?: { code: string; message: string }): Rec {
  return { error: { code, message, ...(inner ? { innererror: inner } : {}) } };
}

/** Sends an Azure.Core error with its `x-ms-error-code` header. */
export function sendAzureError(x: Exchange, status: number, code: string, message: string, inner?: { code: string; message: string }): void {
  x.sendJson(status, azureError(code, message, inner), { 'x-ms-error-code': code });
}

const FAULT_CODES: Record<number, string> = {
  400: 'InvalidRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 409: 'Conflict',
  429: 'TooManyRequests', 500: 'InternalServerError', 503: 'ServiceUnavailable', 504: 'Timeout',
};

/** The Azure.Core-shaped body and headers for a fault status (429 carries retry-after: 7). */
export function azureFaultResponse(status: number): { body: unknown; headers: http.OutgoingHttpHeaders } {
  const code = FAULT_CODES[status] ?? (status >= 500 ? 'InternalServerError' : 'InvalidRequest');
  const headers: http.OutgoingHttpHeaders = { 'x-ms-error-code': code, ...(status === 429 ? { 'retry-after': '7' } : {}) };
  return { body: azureError(code, `Simulated error (status ${status}).`), headers };
}

/**
 * False (after answering 404 `Resource not found`, as Azure does for an api-version it does not serve)
 * unless the query names exactly `version`.
 */
export function checkApiVersion(x: Exchange, url: URL, version: string): boolean {
  const got = url.searchParams.getAll('api-version');
  if (got.length === 1 && got[0] === version) return true;
  const said = got.length === 0 ? 'missing' : got.join(',');
  sendAzureError(x, 404, '404', `Resource not found (api-version ${said}; the simulator serves ${version}).`);
  return false;
}

/** The 400 for a body that is not JSON. */
export const invalidJson = (x: Exchange) => sendAzureError(x, 400, 'InvalidRequestBody', 'The request body is not valid JSON.');

// ---------------------------------------------------------------------------------------------------
// POST /contentsafety/text:analyze

export const CONTENT_SAFETY_API_VERSION = '2024-09-01';
export const CONTENT_SAFETY_PATH = '/contentsafety/text:analyze';
export const TEXT_CATEGORIES = ['Hate', 'SelfHarm', 'Sexual', 'Violence'] as const;
/** `text` limit of the spec: 10,000 Unicode code points (`maxLength: 10000`). */
export const MAX_TEXT_CODE_POINTS = 10_000;
const FIELDS = ['text', 'categories', 'blocklistNames', 'haltOnBlocklistHit', 'outputType'] as const;

type TextCategory = (typeof TEXT_CATEGORIES)[number];

/** Words that raise a category's severity (each occurrence one step). */
const TRIGGERS: Record<TextCategory, RegExp> = {
  Hate: /\b(hate|hateful|bigot\w*)\b/giu,
  SelfHarm: /\b(self-harm|suicide|hurt myself)\b/giu,
  Sexual: /\b(sexual|explicit|nsfw)\b/giu,
  Violence: /\b(kill|attack|violence|violent|weapon)\b/giu,
};

/** Severity of `category` in `text`: 0 without trigger words; EightSeverityLevels 0..7, FourSeverityLevels 0, 2, 4, 6. */
export function severity(text: string, category: TextCategory, eight: boolean): number {
  const hits = text.match(TRIGGERS[category])?.length ?? 0;
  const level = Math.min(7, hits * 2);
  return eight ? level : Math.min(6, 2 * Math.floor(level / 2));
}

async function analyzeText(x: Exchange): Promise<void> {
  const body = x.body;
  const fail = (message: string) => sendAzureError(x, 400, 'InvalidRequestBody', message);
  if (!isRecord(body)) return fail('The request body must be a JSON object.');
  const extra = unknownKey(body, FIELDS);
  if (extra !== undefined) return fail(`Unknown field '${extra}' (the simulator rejects fields the spec does not define).`);
  if (typeof body.text !== 'string') return fail("The field 'text' is required and must be a string.");
  const length = Array.from(body.text).length;
  if (length > MAX_TEXT_CODE_POINTS) return fail(`The text is ${length} characters long; the limit is ${MAX_TEXT_CODE_POINTS} characters (Unicode code points).`);
  const categories = body.categories ?? [...TEXT_CATEGORIES];
  if (!Array.isArray(categories) || !categories.every((c) => (TEXT_CATEGORIES as readonly unknown[]).includes(c))) {
    return fail(`'categories' must be an array of ${TEXT_CATEGORIES.join(', ')}.`);
  }
  const outputType = body.outputType ?? 'FourSeverityLevels';
  if (outputType !== 'FourSeverityLevels' && outputType !== 'EightSeverityLevels') return fail("'outputType' must be FourSeverityLevels or EightSeverityLevels.");
  if (body.blocklistNames !== undefined && !(Array.isArray(body.blocklistNames) && body.blocklistNames.every((n) => typeof n === 'string'))) {
    return fail("'blocklistNames' must be an array of strings.");
  }
  if (body.haltOnBlocklistHit !== undefined && typeof body.haltOnBlocklistHit !== 'boolean') return fail("'haltOnBlocklistHit' must be a boolean.");
  const text = body.text;
  const answer: Rec = {
    categoriesAnalysis: (categories as TextCategory[]).map((category) => ({ category, severity: severity(text, category, outputType === 'EightSeverityLevels') })),
  };
  if (body.blocklistNames !== undefined) answer.blocklistsMatch = [];
  await sendJsonAnswer(x, answer);
}

// ---------------------------------------------------------------------------------------------------
// POST /contentsafety/image:analyze

export const IMAGE_ANALYZE_PATH = '/contentsafety/image:analyze';
/** "should not exceed 4 MB" (`ImageData`). */
export const MAX_IMAGE_BYTES = 4 * 1024 * 1024;
/** "The maximum image size is 2048 x 2048 pixels ... the minimum image size is 50 x 50 pixels." */
export const IMAGE_SIDE = { min: 50, max: 2048 } as const;

// The image format by magic bytes and the sizes in the headers: the same pure readers the gateway uses.
export { imageDimensions, imageFormat };

/** Severity of `category` for an image: 0, 2, 4 or 6 from one byte of the SHA-256 of its bytes (mostly 0). */
export function imageSeverity(seed: Buffer | string, category: TextCategory): number {
  const byte = createHash('sha256').update(seed).update(category).digest()[0]!;
  return byte < 160 ? 0 : byte < 208 ? 2 : byte < 240 ? 4 : 6;
}

async function analyzeImage(x: Exchange): Promise<void> {
  const body = x.body;
  const fail = (message: string) => sendAzureError(x, 400, 'InvalidRequestBody', message);
  if (!isRecord(body)) return fail('The request body must be a JSON object.');
  const extra = unknownKey(body, ['image', 'categories', 'outputType']);
  if (extra !== undefined) return fail(`Unknown field '${extra}' (the simulator rejects fields the spec does not define).`);
  const image = body.image;
  if (!isRecord(image)) return fail("The field 'image' is required and must be an object.");
  const extraImage = unknownKey(image, ['content', 'blobUrl']);
  if (extraImage !== undefined) return fail(`Unknown field 'image.${extraImage}'.`);
  if ((image.content === undefined) === (image.blobUrl === undefined)) return fail("Exactly one of 'image.content' and 'image.blobUrl' must be given.");
  const categories = body.categories ?? [...TEXT_CATEGORIES];
  if (!Array.isArray(categories) || !categories.every((c) => (TEXT_CATEGORIES as readonly unknown[]).includes(c))) {
    return fail(`'categories' must be an array of ${TEXT_CATEGORIES.join(', ')}.`);
  }
  if (body.outputType !== undefined && body.outputType !== 'FourSeverityLevels') return fail("'outputType' must be FourSeverityLevels for images.");
  let seed: Buffer | string;
  if (image.content !== undefined) {
    const b64 = image.content;
    if (typeof b64 !== 'string' || b64 === '' || b64.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return fail("'image.content' is not valid base64.");
    const bytes = Buffer.from(b64, 'base64');
    if (bytes.length > MAX_IMAGE_BYTES) return fail(`The image is ${bytes.length} bytes; the limit is 4 MB (${MAX_IMAGE_BYTES} bytes).`);
    const format = imageFormat(bytes);
    if (!format) return fail('The image format is not supported (JPEG, PNG, GIF, BMP, TIFF or WEBP).');
    const size = imageDimensions(bytes);
    if (size && (Math.min(size.width, size.height) < IMAGE_SIDE.min || Math.max(size.width, size.height) > IMAGE_SIDE.max)) {
      return fail(`The image is ${size.width} x ${size.height} pixels; it must be from ${IMAGE_SIDE.min} x ${IMAGE_SIDE.min} to ${IMAGE_SIDE.max} x ${IMAGE_SIDE.max}.`);
    }
    seed = bytes;
  } else {
    if (typeof image.blobUrl !== 'string' || !URL.canParse(image.blobUrl)) return fail("'image.blobUrl' must be an absolute URL.");
    seed = image.blobUrl; // the simulator reads no blob: severities follow the URL
  }
  await sendJsonAnswer(x, { categoriesAnalysis: (categories as TextCategory[]).map((category) => ({ category, severity: imageSeverity(seed, category) })) });
}

/** `POST /contentsafety/text:analyze` and `POST /contentsafety/image:analyze` (`?api-version=2024-09-01`) for a given URL. */
export function matchContentSafety(method: string, url: URL): SimMatch | undefined {
  if (method !== 'POST' || (url.pathname !== CONTENT_SAFETY_PATH && url.pathname !== IMAGE_ANALYZE_PATH)) return undefined;
  const analyze = url.pathname === CONTENT_SAFETY_PATH ? analyzeText : analyzeImage;
  return {
    faultKey: 'azure-content-safety',
    route: {
      faultResponse: azureFaultResponse,
      async handle(x) {
        if (!checkApiVersion(x, url, CONTENT_SAFETY_API_VERSION)) return;
        if (!x.parsed) return invalidJson(x);
        await analyze(x);
      },
    },
  };
}
