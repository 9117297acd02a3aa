/**
 * What the two document translators share (spec 4.9: document translation answers a DOCX download,
 * PII redaction a PDF download): the download's file name, made from the client's own file name, and
 * the checks that the upstream's bytes are the document promised (a 200 that is not is the upstream's
 * fault: 502, nothing billed).
 */
import { GatewayError } from '../errors.js';
import type { UploadedFile } from '../bodies/multipart.js';
import type { FilePlan } from './types.js';

/** The DOCX media type (OOXML word-processing document). */
export const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/** Longest stem kept from the client's file name (in code points), so the header stays short. */
const MAX_STEM = 100;

/**
 * The client's file name reduced to a safe stem: the last path segment (a browser may send
 * `C:\Users\...\report.docx`), without the extension `ext`, control characters and the characters
 * file systems refuse (`/ \ : * ? " < > |`) replaced by `_`, leading and trailing dots and spaces
 * trimmed, at most 100 code points; `fallback` when nothing is left.
 */
export function fileStem(name: string | undefined, ext: string, fallback = 'document'): string {
  const last = (name ?? '').split(/[/\\]/).pop() ?? '';
  const bare = last.toLowerCase().endsWith(`.${ext}`) ? last.slice(0, -(ext.length + 1)) : last;
  const trim = (text: string): string => text.replace(/^[.\s]+|[.\s]+$/g, '');
  const stem = trim([...trim(bare.replace(/[\u0000-\u001f\u007f-\u009f:*?"<>|]/g, '_'))].slice(0, MAX_STEM).join(''));
  return stem === '' || /^_+$/.test(stem) ? fallback : stem;
}

/** The download's name: `<stem>.<tag>.<ext>` (e.g. `report.fr.docx`, `scan.redacted.pdf`). */
export function downloadName(name: string | undefined, tag: string, ext: string): string {
  return `${fileStem(name, ext)}.${tag}.${ext}`;
}

/** The request's one file part `field` (the route's `min: 1` guarantees it; its absence is a gateway bug). */
export function documentPart(files: readonly UploadedFile[] | undefined, field = 'document'): UploadedFile {
  const file = files?.find((f) => f.field === field);
  if (!file) throw new GatewayError('internal_error', `The request has no '${field}' part to send.`);
  return file;
}

/** True when the bytes start like a zip archive (local file header `PK\x03\x04`), as every DOCX does. */
export function looksLikeZip(data: Buffer): boolean {
  return data.length >= 4 && data.readUInt32LE(0) === 0x04034b50;
}

/** How far into each end of a PDF its markers are looked for. */
const PDF_MARKER_BYTES = 1024;

/**
 * The plan of a DOCX answer downloaded as `filename` (with the quantities it reports): a zip package
 * from its first four bytes, as every DOCX is.
 */
export function docxPlan(filename: string, quantities?: Record<string, number>): FilePlan {
  return {
    contentType: DOCX_TYPE, filename, ...(quantities ? { quantities } : {}), headBytes: 4, tailBytes: 0,
    checkHead(head) { if (!looksLikeZip(head)) throw notTheDocument('a DOCX'); },
  };
}

/**
 * The plan of a PDF answer downloaded as `filename`: it starts like a PDF (`%PDF-` in its first
 * kilobyte) and ends like one (`%%EOF` in its last), so a PDF cut short is refused.
 */
export function pdfPlan(filename: string): FilePlan {
  return {
    contentType: 'application/pdf', filename, headBytes: PDF_MARKER_BYTES, tailBytes: PDF_MARKER_BYTES,
    checkHead(head) { if (!head.includes('%PDF-')) throw notTheDocument('a PDF'); },
    checkTail(tail) { if (!tail.includes('%%EOF')) throw notTheDocument('a PDF'); },
  };
}

/** The 502 for a 200 whose bytes are not the document expected (nothing billed). */
export function notTheDocument(what: string): GatewayError {
  return new GatewayError('upstream_error', `The upstream provider sent a file that is not ${what}.`);
}

/** Refuses a JSON answer where a file was expected (an operation with `answer: binary` answers bytes). */
export function noJson(): never {
  throw new GatewayError('upstream_error', 'The upstream provider sent JSON where a document was expected.');
}

/** Refuses a stream: these operations answer one file. */
export function noStream(): never {
  throw new GatewayError('invalid_request', 'This endpoint does not stream.');
}
