/**
 * What the two Azure Document Intelligence translators share (spec 4.12; vendor spec
 * shared/specs/azure/document-intelligence/DocumentIntelligence-2025-09-01.json, api-version
 * 2025-09-01): the analyze request (`AnalyzeDocumentRequest {base64Source}`, never `urlSource`: the
 * route's `url_inputs` already turned any client URL into verified bytes, and the field holds
 * `data:<sniffed type>;base64,<payload>`), the query parameters a client may set, the finished
 * operation (`AnalyzeOperation {status, analyzeResult}`) read back, its pages in the gateway's shape,
 * and the pages billed: the number of `analyzeResult.pages`, the pages the vendor processed (spec 1
 * "per processed page"; a `pages` range or a partial result bills only those). Errors are Azure.Core
 * bodies whose `innererror` says what was wrong (shared with Azure Language).
 */
import { GatewayError } from '../errors.js';
import { azureCoreError } from './upstream-error.js';
import { imageDimensions } from '../files/verify/dimensions.js';
import { base64Payload, decodeBase64 } from './image-input.js';
import type { TranslatedAnswer, Translator } from './types.js';

/**
 * Image inputs: "Image dimensions must be between 50 pixels x 50 pixels and 10,000 pixels x 10,000
 * pixels" (Document Intelligence service limits; the vendor spec states none). Refused here, before
 * anything is reserved, where the image's header tells its size.
 */
export const IMAGE_SIDE = { min: 50, max: 10_000 } as const;

/**
 * `stringIndexType` asked of the vendor: offsets and lengths in `spans` count Unicode code points,
 * as the gateway's other text offsets do (the vendor's default, text elements, depends on its
 * Unicode version).
 */
export const STRING_INDEX_TYPE = 'unicodeCodePoint';

type Rec = Record<string, unknown>;

/** The bytes of the input field (a data URL, or plain base64 when no `url_inputs` step ran), checked. */
export function documentBytes(value: unknown, param: string): { base64: string; bytes: Buffer } {
  const text = typeof value === 'string' ? value : '';
  const payload = base64Payload(text);
  const bytes = payload === null ? null : decodeBase64(payload);
  if (!bytes || bytes.length === 0) throw new GatewayError('invalid_request', `'${param}' is not valid base64 or a base64 data URL.`, { param });
  const size = imageDimensions(bytes);
  if (size && (Math.min(size.width, size.height) < IMAGE_SIDE.min || Math.max(size.width, size.height) > IMAGE_SIDE.max)) {
    throw new GatewayError('invalid_request', `The image in '${param}' is ${size.width} x ${size.height} pixels; it must be from ${IMAGE_SIDE.min} x ${IMAGE_SIDE.min} to ${IMAGE_SIDE.max} x ${IMAGE_SIDE.max}.`, { param });
  }
  return { base64: bytes.toString('base64'), bytes };
}

/** The analyze query parameters a request adds (`pages`, `locale`, `outputContentFormat`) and the index type. */
export function analyzeQuery(body: Rec): Record<string, string[]> {
  const query: Record<string, string[]> = { stringIndexType: [STRING_INDEX_TYPE] };
  if (typeof body.pages === 'string') query.pages = [body.pages];
  if (typeof body.locale === 'string') query.locale = [body.locale];
  if (typeof body.content_format === 'string') query.outputContentFormat = [body.content_format];
  return query;
}

export function malformed(what: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider sent a malformed ${what} answer.`);
}

/**
 * The `analyzeResult` of a finished operation. A status other than succeeded never gets here (the
 * poll ends the request first); a succeeded one without a result, or one whose `content` or `pages`
 * is missing, is malformed: a 502, and nothing is billed.
 */
export function analyzeResultOf(operation: Rec, what: string): Rec & { content: string; pages: unknown[] } {
  if (operation.status !== 'succeeded') throw new GatewayError('upstream_error', `The upstream ${what} operation ended with status "${String(operation.status)}".`);
  const result = operation.analyzeResult;
  if (!isRecord(result) || typeof result.content !== 'string' || !Array.isArray(result.pages)) throw malformed(what);
  return result as Rec & { content: string; pages: unknown[] };
}

export const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

const numberOrAbsent = (v: unknown, what: string): number | undefined => {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw malformed(what);
  return v;
};

/** `polygon` when the vendor gave one (a list of numbers). */
function polygonOf(v: unknown, what: string): { polygon?: number[] } {
  if (v === undefined) return {};
  if (!Array.isArray(v) || !v.every((n) => typeof n === 'number')) throw malformed(what);
  return { polygon: v };
}

/** One element (line, word) with its text: `content` becomes `text`. */
function textElement(raw: unknown, what: string, withConfidence: boolean): Rec {
  if (!isRecord(raw) || typeof raw.content !== 'string') throw malformed(what);
  const confidence = withConfidence ? numberOrAbsent(raw.confidence, what) : undefined;
  return { text: raw.content, ...(confidence !== undefined ? { confidence } : {}), ...polygonOf(raw.polygon, what) };
}

const listOf = (v: unknown, what: string): unknown[] => {
  if (v === undefined) return [];
  if (!Array.isArray(v)) throw malformed(what);
  return v;
};

/**
 * One `DocumentPage` in the gateway's shape: `page_number`, `width`, `height` and `unit` (pixel for
 * images, inch for PDFs), `angle`, `lines` and `words` (`{text, confidence?, polygon?}`), and
 * `selection_marks` when there are any.
 */
export function clientPage(raw: unknown, what: string): Rec {
  if (!isRecord(raw) || typeof raw.pageNumber !== 'number' || !Number.isInteger(raw.pageNumber) || raw.pageNumber < 1) throw malformed(what);
  const page: Rec = { page_number: raw.pageNumber };
  for (const [from, to] of [['width', 'width'], ['height', 'height'], ['angle', 'angle']] as const) {
    const value = numberOrAbsent(raw[from], what);
    if (value !== undefined) page[to] = value;
  }
  if (raw.unit !== undefined) {
    if (typeof raw.unit !== 'string') throw malformed(what);
    page.unit = raw.unit;
  }
  page.lines = listOf(raw.lines, what).map((l) => textElement(l, what, false));
  page.words = listOf(raw.words, what).map((w) => textElement(w, what, true));
  const marks = listOf(raw.selectionMarks, what).map((m) => {
    if (!isRecord(m) || typeof m.state !== 'string') throw malformed(what);
    const confidence = numberOrAbsent(m.confidence, what);
    return { state: m.state, ...(confidence !== undefined ? { confidence } : {}), ...polygonOf(m.polygon, what) };
  });
  if (marks.length > 0) page.selection_marks = marks;
  return page;
}

/** The answer's pages, and the pages billed (those the vendor reports processed). */
export function clientPages(result: { pages: unknown[] }, what: string): { pages: Rec[]; count: number } {
  const pages = result.pages.map((p) => clientPage(p, what));
  return { pages, count: pages.length };
}

/** A Document Intelligence translator from its request builder and answer reader; errors and the refusal to stream are shared. */
export function documentIntelligenceTranslator(
  body: Rec,
  param: string,
  what: string,
  answer: (result: Rec & { content: string; pages: unknown[] }, clientModel: string) => { body: Rec; pages: number },
): Translator {
  const input = documentBytes(body[param], param);
  return {
    request: () => ({ base64Source: input.base64 }),
    query: analyzeQuery,
    response(upstream, clientModel): TranslatedAnswer {
      const out = answer(analyzeResultOf(upstream, what), clientModel);
      return { body: out.body, usage: null, outputText: '', quantities: { pages: out.pages } };
    },
    stream: () => { throw new GatewayError('invalid_request', `${what[0]!.toUpperCase()}${what.slice(1)} does not stream.`); },
    error: azureCoreError,
  };
}
