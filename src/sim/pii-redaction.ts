/**
 * The PII redaction contract of docs/vendors/pii-redaction.md in the simulator (the contract the
 * gateway speaks pending certification; no vendor spec exists in ../shared/specs):
 * `POST /pii/v1/documents:redact-pdf[?language=<code>]` with the PDF as the raw body
 * (`Content-Type: application/pdf`). An `Authorization` header, when present, must be `Bearer <key>`
 * (the gateway sends none to the simulator). The PDF is parsed with pdf-lib (a body that is not one
 * is a 400) and answered, with as many pages, with a black box drawn over the top band of every page,
 * where the test documents print their text (the simulator detects nothing: the box stands for a
 * redaction; the text under it stays in the file). Header `x-pages` = the pages redacted (informative:
 * the gateway counts pages itself). Errors are `{error: {code, message}}`. Faults scope by
 * `pii-redaction`: `error_after_chunks` answers a 200 whose bytes are not a PDF;
 * `truncate_after_chunks` and `chunk_delay_ms` cut or slow the bytes.
 */
import type http from 'node:http';
import { PDFDocument, rgb } from 'pdf-lib';
import { sendBytes, type RawRequest } from './anthropic-files.js';
import type { Exchange } from './exchange.js';
import type { SimMatch } from './azure-content-safety.js';

export const PII_REDACT_PATH = '/pii/v1/documents:redact-pdf';
const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
/** Height of the redaction band at the top of each page, in PDF points. */
const BAND = 90;

const FAULT_CODES: Record<number, string> = { 400: 'InvalidRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 413: 'PayloadTooLarge', 429: 'TooManyRequests' };

/** The contract's error body. */
export function piiError(code: string, message: string): { error: { code: string; message: string } } {
  return { error: { code, message } };
}

function faultResponse(status: number): { body: unknown; headers: http.OutgoingHttpHeaders } {
  const code = FAULT_CODES[status] ?? (status >= 500 ? 'InternalServerError' : 'InvalidRequest');
  return { body: piiError(code, `Simulated error (status ${status}).`), headers: status === 429 ? { 'retry-after': '7' } : {} };
}

/** The PDF with a black box over the top band of every page, saved again (same page count). */
export async function simRedactPdf(bytes: Buffer): Promise<{ data: Buffer; pages: number }> {
  const pdf = await PDFDocument.load(bytes, { updateMetadata: false });
  for (const page of pdf.getPages()) {
    const { width, height } = page.getSize();
    page.drawRectangle({ x: 0, y: Math.max(0, height - BAND), width, height: Math.min(BAND, height), color: rgb(0, 0, 0) });
  }
  return { data: Buffer.from(await pdf.save({ useObjectStreams: false })), pages: pdf.getPageCount() };
}

async function redact(x: Exchange, url: URL, raw: RawRequest): Promise<void> {
  const fail = (status: number, code: string, message: string) => x.sendJson(status, piiError(code, message));
  const auth = x.headers.authorization;
  if (auth !== undefined && !/^Bearer \S+$/.test(String(auth))) return fail(401, 'Unauthorized', 'The Authorization header must be "Bearer <key>".');
  const unknown = [...url.searchParams.keys()].find((k) => k !== 'language');
  if (unknown) return fail(400, 'InvalidRequest', `Unknown query parameter '${unknown}'.`);
  const language = url.searchParams.getAll('language');
  if (language.length > 1 || (language.length === 1 && !LANGUAGE.test(language[0]!))) return fail(400, 'InvalidRequest', "'language' must be one language code.");
  const type = String(x.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/pdf') return fail(415, 'UnsupportedMediaType', `Content-Type '${type}' is not supported; send the PDF as application/pdf.`);
  let redacted: { data: Buffer; pages: number };
  try { redacted = await simRedactPdf(raw.bytes); } catch {
    return fail(400, 'InvalidDocument', 'The body is not a PDF the service can read.');
  }
  const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/pdf', 'x-pages': String(redacted.pages) };
  if (x.fault.error_after_chunks !== undefined) return sendBytes(raw.sink, {}, Buffer.from('{"error": {"code": "simulated'), headers);
  await sendBytes(raw.sink, x.fault, redacted.data, headers);
}

/** `POST /pii/v1/documents:redact-pdf`, over the request's raw bytes. */
export function matchPiiRedaction(method: string, url: URL, raw: RawRequest): SimMatch | undefined {
  if (method !== 'POST' || url.pathname !== PII_REDACT_PATH) return undefined;
  return { faultKey: 'pii-redaction', route: { faultResponse, handle: (x) => redact(x, url, raw) } };
}
