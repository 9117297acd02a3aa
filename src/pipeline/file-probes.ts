/**
 * File parts measured before anything is reserved (spec 1 "Speech recognition: audio minute or
 * reported tokens"; spec 4.8): a route's multipart part declared with `probe: audio` has its duration
 * read locally (music-metadata) so the meters can reserve and bill from it (`of: [files:/<part>]`).
 * Runs in the route stage after `file_inputs`, so a temporary file put into the part is measured the
 * same way. Also checks the parts' `min` for a route that takes JSON too (a JSON body never went
 * through the multipart parser). A file that cannot be read as audio is a 400 naming the part.
 */
import { GatewayError } from '../errors.js';
import type { FilePartSpec, MultipartSpec, UploadedFile } from '../bodies/multipart.js';
import type { RequestContext } from './context.js';
import { imageDimensions, imageFormat } from '../files/verify/dimensions.js';
import { measureDocx, measurePdf } from '../files/verify/documents.js';
import { OFFICE_TYPES } from '../files/verify/package.js';

/** The longest duration believed (24 hours): a header claiming more is not audio a vendor will take. */
const MAX_SECONDS = 86_400;

/** The duration of an audio file in seconds, or null when it cannot be read as audio. */
export async function audioDurationSeconds(data: Buffer, contentType: string): Promise<number | null> {
  try {
    // `duration: true` scans an MP3 without a Xing/VBRI header to its end rather than guessing from the bitrate.
    // music-metadata is loaded on the first audio file, not at start (issue 8, memory).
    const { parseBuffer } = await import('music-metadata');
    const meta = await parseBuffer(data, { mimeType: contentType || undefined, size: data.length }, { duration: true, skipCovers: true });
    const seconds = meta.format.duration;
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_SECONDS) return null;
    return seconds;
  } catch {
    return null;
  }
}

/**
 * `probe: image` (spec 4.14 image edits): the format read from the magic bytes must be one of the
 * part's declared types (a declared type alone is the client's word); the file then travels with the
 * verified type, and its width and height, where the header tells, are facts for the model's limits.
 */
function probeImage(file: UploadedFile, mime: ReadonlySet<string> | null): UploadedFile {
  const format = imageFormat(file.data);
  const type = format ? `image/${format}` : null;
  if (!type || (mime && !mime.has(type))) {
    const accepted = mime ? [...mime].map((m) => m.replace(/^image\//, '')).join(', ') : 'an image';
    throw new GatewayError('invalid_request', `The file in '${file.field}' is not a supported image (${format ?? 'unrecognised bytes'}; supported: ${accepted}).`, { param: file.field });
  }
  const size = imageDimensions(file.data);
  return { ...file, contentType: type, facts: { ...file.facts, size_bytes: file.data.length, ...(size ? { width: size.width, height: size.height } : {}) } };
}

/** A document refused by its probe: what the bytes are, and the one format the part takes. */
function notDocument(file: UploadedFile, reason: string, supported: string): GatewayError {
  return new GatewayError('invalid_request', `The file in '${file.field}' is not a usable ${supported}: ${reason} Supported: ${supported}.`, { param: file.field });
}

/**
 * `probe: docx` and `probe: pdf` (spec 4.9: document translation takes one DOCX, PII redaction one
 * PDF; checked by content, never by name or declared type): the file travels with its verified type
 * and its facts (characters of a DOCX's text, pages of a PDF) for the meters.
 */
async function probeDocument(file: UploadedFile, kind: 'docx' | 'pdf'): Promise<UploadedFile> {
  if (kind === 'docx') {
    const docx = await measureDocx(file.data);
    if (!docx.ok) throw notDocument(file, docx.reason, 'DOCX');
    return { ...file, contentType: OFFICE_TYPES.docx.mime, facts: { ...file.facts, size_bytes: file.data.length, characters: docx.characters } };
  }
  const pdf = await measurePdf(file.data);
  if (!pdf.ok) throw notDocument(file, pdf.reason, 'PDF');
  return { ...file, contentType: 'application/pdf', facts: { ...file.facts, size_bytes: file.data.length, pages: pdf.pages } };
}

async function probe(file: UploadedFile, kind: NonNullable<FilePartSpec['probe']>, mime: ReadonlySet<string> | null): Promise<UploadedFile> {
  if (kind === 'image') return probeImage(file, mime);
  if (kind === 'docx' || kind === 'pdf') return probeDocument(file, kind);
  if (kind === 'audio') {
    const seconds = await audioDurationSeconds(file.data, file.contentType);
    if (seconds === null) {
      throw new GatewayError('invalid_request', `The file in '${file.field}' could not be read as audio (supported: mp3, mp4, m4a, wav, webm, ogg, flac).`, { param: file.field });
    }
    return { ...file, facts: { ...file.facts, duration_seconds: seconds, size_bytes: file.data.length } };
  }
  return file;
}

/** True when a route needs the step: a part to probe, or a JSON body whose parts' `min` must still be checked. */
export function needsFileProbes(spec: MultipartSpec | null): spec is MultipartSpec {
  return spec !== null && (spec.acceptsJson === true || Object.values(spec.files).some((f) => f.probe !== undefined));
}

/** Checks the declared parts' `min` and measures every part declared with a probe. */
export async function probeFiles(ctx: RequestContext, spec: MultipartSpec, alternatives: Readonly<Record<string, string>> = {}): Promise<void> {
  for (const [field, part] of Object.entries(spec.files)) {
    if (ctx.files.filter((f) => f.field === field).length >= part.min) continue;
    const other = alternatives[field];
    throw new GatewayError('invalid_request', other ? `Send the file as the multipart part '${field}', or its temporary file id as '${other}'.` : `Missing required file part '${field}'.`, { param: field });
  }
  ctx.files = await Promise.all(ctx.files.map((file) => {
    const part = spec.files[file.field];
    return part?.probe ? probe(file, part.probe, part.mime) : file;
  }));
}
