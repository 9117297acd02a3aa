/**
 * Documents checked by their content, not their name (issue 12; spec 4.9, 4.12): a DOCX is a real
 * OOXML word-processing package, whose text characters are counted; a PDF is parsed by a PDF parser
 * (pdf-lib), whose pages are counted; a TIFF's pages are its image file directories; any other image
 * is one page. Every refusal is one sentence a client can read, saying what the bytes are.
 */
import { sniffType } from '../sniff.js';
import { OFFICE_TYPES, verifyOfficePackage } from './package.js';
import { inspectZip } from './zip.js';

/** A measured document, or why it is not the document asked for. */
export type Measured<T> = ({ ok: true } & T) | { ok: false; reason: string };

/** Readable names of the types a client most often sends by mistake. */
const LABELS: Readonly<Record<string, string>> = {
  'application/pdf': 'a PDF document',
  [OFFICE_TYPES.docx.mime]: 'a Word document (DOCX)',
  [OFFICE_TYPES.xlsx.mime]: 'an Excel workbook (XLSX)',
  [OFFICE_TYPES.pptx.mime]: 'a PowerPoint presentation (PPTX)',
  'application/zip': 'a zip archive',
  'application/x-cfb': 'a legacy Office document (DOC, XLS or PPT)',
  'image/png': 'a PNG image', 'image/jpeg': 'a JPEG image', 'image/tiff': 'a TIFF image', 'image/gif': 'a GIF image',
  'image/webp': 'a WebP image', 'image/bmp': 'a BMP image', 'image/heic': 'a HEIC image',
};

/** What the bytes are, in words: "a PDF document", "a PNG image", or "not a recognised document". */
export async function describeBytes(bytes: Buffer): Promise<string> {
  const mime = (await sniffType(bytes))?.mime;
  if (!mime) return 'not a recognised document';
  return LABELS[mime] ?? `of type ${mime}`;
}

/** The main part of a word-processing package as its content types name it (`/word/document.xml`). */
const MAIN_PART = /<(?:\w+:)?Override\b[^>]*PartName\s*=\s*["']\/?([^"']+)["'][^>]*ContentType\s*=\s*["']application\/vnd\.openxmlformats-officedocument\.wordprocessingml\.document\.main\+xml["']/i;
const MAIN_PART_REVERSED = /<(?:\w+:)?Override\b[^>]*ContentType\s*=\s*["']application\/vnd\.openxmlformats-officedocument\.wordprocessingml\.document\.main\+xml["'][^>]*PartName\s*=\s*["']\/?([^"']+)["']/i;

/** XML character data with the predefined and numeric entities decoded. */
function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/gi, (whole, name: string) => {
    const lower = name.toLowerCase();
    if (lower.startsWith('#x')) return String.fromCodePoint(parseInt(lower.slice(2), 16));
    if (lower.startsWith('#')) return String.fromCodePoint(parseInt(lower.slice(1), 10));
    return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[lower] ?? whole;
  });
}

/** Unicode code points of the text runs (`<w:t>`) of a main document part. */
export function documentTextCharacters(xml: string): number {
  let total = 0;
  for (const run of xml.matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g)) total += [...unescapeXml(run[1] ?? '')].length;
  return total;
}

const CONTENT_TYPES = '[Content_Types].xml';
/** Where word processors put the main document part. */
const CONVENTIONAL_MAIN = 'word/document.xml';

/** The largest main document part read for its text (the whole DOCX is at most a few MiB). */
const MAX_MAIN_PART_BYTES = 64 * 1024 * 1024;

/**
 * A DOCX: a sound OOXML word-processing package (spec 4.9: "one DOCX"), and the characters of its
 * text runs, the estimate a translation reserves (the vendor reports what it bills).
 */
export async function measureDocx(bytes: Buffer): Promise<Measured<{ characters: number }>> {
  const verdict = await verifyOfficePackage(bytes, 'docx');
  if (!verdict.ok) {
    const what = await describeBytes(bytes);
    return { ok: false, reason: what === LABELS[OFFICE_TYPES.docx.mime] ? verdict.reason : `The bytes are ${what}.` };
  }
  // One pass keeps the content types and the conventional main part; a package naming another main part needs a second.
  let zip = await inspectZip(bytes, {}, { keep: [CONTENT_TYPES, CONVENTIONAL_MAIN], keepMaxBytes: MAX_MAIN_PART_BYTES });
  if (!zip.ok) return { ok: false, reason: zip.reason };
  const typesXml = zip.entries.get(CONTENT_TYPES)?.toString('utf8') ?? '';
  const main = (MAIN_PART.exec(typesXml) ?? MAIN_PART_REVERSED.exec(typesXml))?.[1] ?? CONVENTIONAL_MAIN;
  if (!zip.entries.has(main)) zip = await inspectZip(bytes, {}, { keep: [main], keepMaxBytes: MAX_MAIN_PART_BYTES });
  if (!zip.ok) return { ok: false, reason: zip.reason };
  return { ok: true, characters: documentTextCharacters(zip.entries.get(main)?.toString('utf8') ?? '') };
}

/** A PDF's trailer must be in its last kilobyte: a file cut short has none. */
function hasEndOfFile(bytes: Buffer): boolean {
  return bytes.subarray(Math.max(0, bytes.length - 1024)).includes('%%EOF');
}

/** A PDF parsed by pdf-lib, and its page count; truncated, encrypted-beyond-reading or pageless is refused. */
export async function measurePdf(bytes: Buffer): Promise<Measured<{ pages: number }>> {
  if (!bytes.subarray(0, 1024).includes('%PDF-')) return { ok: false, reason: `The bytes are ${await describeBytes(bytes)}.` };
  if (!hasEndOfFile(bytes)) return { ok: false, reason: 'The PDF is incomplete: it has no end-of-file marker (it may be truncated).' };
  try {
    // pdf-lib is loaded on the first PDF, not at start (issue 8, memory).
    const { PDFDocument } = await import('pdf-lib');
    const pdf = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false, throwOnInvalidObject: true });
    const pages = pdf.getPageCount();
    return pages > 0 ? { ok: true, pages } : { ok: false, reason: 'The PDF has no pages.' };
  } catch {
    return { ok: false, reason: 'The PDF could not be parsed (it is malformed or truncated).' };
  }
}

/** Most image file directories followed in a TIFF (a loop or a corrupt chain stops here). */
const MAX_TIFF_PAGES = 10_000;

/** The pages of a TIFF: its chain of image file directories; 1 when the chain cannot be read. */
export function tiffPages(bytes: Buffer): number {
  const little = bytes.toString('latin1', 0, 2) === 'II';
  if (!little && bytes.toString('latin1', 0, 2) !== 'MM') return 1;
  const u16 = (at: number): number => (little ? bytes.readUInt16LE(at) : bytes.readUInt16BE(at));
  const u32 = (at: number): number => (little ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at));
  if (bytes.length < 8 || u16(2) !== 42) return 1; // BigTIFF (43) and anything else: counted as one page
  const seen = new Set<number>();
  let offset = u32(4);
  while (offset !== 0 && offset + 2 <= bytes.length && !seen.has(offset) && seen.size < MAX_TIFF_PAGES) {
    seen.add(offset);
    const next = offset + 2 + u16(offset) * 12;
    if (next + 4 > bytes.length) break;
    offset = u32(next);
  }
  return Math.max(1, seen.size);
}

/**
 * Pages of an input of verified type `mime` (spec 1: OCR and document analysis bill per processed
 * page; this is the reserve, the vendor reports what it processed): a PDF's pages, a TIFF's
 * directories, 1 for anything else (an image; an office document, whose pages only its renderer knows).
 */
export async function documentPages(bytes: Buffer, mime: string): Promise<Measured<{ pages: number }>> {
  if (mime === 'application/pdf') return measurePdf(bytes);
  if (mime === 'image/tiff') return { ok: true, pages: tiffPages(bytes) };
  return { ok: true, pages: 1 };
}
