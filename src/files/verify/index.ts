/**
 * Upload content verification at finalize: do the bytes really have the declared MIME type?
 *
 * Three families, chosen by the normalised declared type:
 * - binary formats: `file-type` sniffs the bytes; the detected type must equal the declared one
 *   (after the alias table below);
 * - text formats: valid UTF-8, no NUL byte, nothing `file-type` recognises; JSON must parse;
 * - zip containers (OOXML and plain zip): inspected entry by entry under the zip-bomb bounds.
 * Any other declared type is unsupported. Every answer is a value: nothing here throws.
 */
import { sniffType } from '../sniff.js';
import { OFFICE_TYPES, officeKindOf, verifyOfficePackage } from './package.js';
import { inspectZip, type ZipBounds } from './zip.js';

export { DEFAULT_ZIP_BOUNDS, inspectZip, type ZipBounds } from './zip.js';
export { verifyOfficePackage, type OfficeKind } from './package.js';

export type { Verification } from './package.js';
import type { Verification } from './package.js';

/**
 * Non-canonical names mapped to the one name compared and recorded. Applied to the declared type and
 * to the type `file-type` detects, so either side may use the alias.
 */
const ALIASES: Readonly<Record<string, string>> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg', // progressive JPEG, old Internet Explorer name
  'audio/mp3': 'audio/mpeg',
  'audio/x-wav': 'audio/wav',
  'audio/wave': 'audio/wav',
  'audio/vnd.wave': 'audio/wav',
  'audio/x-flac': 'audio/flac',
  'audio/x-m4a': 'audio/mp4', // file-type answers audio/x-m4a for the M4A brand, audio/mp4 for M4B/F4A
  'audio/m4a': 'audio/mp4',
  'video/x-m4v': 'video/mp4', // file-type's name for the M4V brand of MP4
  'video/mp1s': 'video/mpeg', // file-type's names for MPEG-1 and MPEG-2 program streams
  'video/mp2p': 'video/mpeg',
};

/**
 * Declared types that also accept another detected type, because the container cannot tell audio from
 * video by its signature (`file-type` calls every WebM video/webm and a plain-brand MP4 video/mp4).
 */
const SAME_CONTAINER: Readonly<Record<string, readonly string[]>> = {
  'audio/webm': ['video/webm'],
  'audio/mp4': ['video/mp4'],
};

/** Binary types verified by sniffing, with the label used in messages about detected bytes. */
const BINARY_TYPES: Readonly<Record<string, string>> = {
  'application/pdf': 'a PDF document',
  'image/png': 'a PNG image',
  'image/jpeg': 'a JPEG image',
  'image/gif': 'a GIF image',
  'image/webp': 'a WebP image',
  'image/tiff': 'a TIFF image',
  'image/bmp': 'a BMP image',
  'image/heic': 'a HEIC image',
  'image/heif': 'a HEIF image',
  'image/avif': 'an AVIF image',
  'audio/mpeg': 'an MPEG audio (MP3) file',
  'audio/wav': 'a WAV audio file',
  'audio/flac': 'a FLAC audio file',
  'audio/ogg': 'an Ogg audio file',
  'audio/webm': 'a WebM audio file',
  'audio/mp4': 'an MP4 audio file',
  'audio/aac': 'an AAC audio file',
  'video/mp4': 'an MP4 video',
  'video/webm': 'a WebM video',
  'video/mpeg': 'an MPEG video',
  'video/quicktime': 'a QuickTime video',
  'video/ogg': 'an Ogg video',
};

/** Text types: checked for encoding and content, since text has no signature to sniff. */
const TEXT_TYPES: ReadonlySet<string> = new Set(['text/plain', 'text/csv', 'text/markdown', 'application/json']);

/** `table[key]` for own keys only, so a type named like `constructor` finds nothing. */
function lookup<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** Lowercase, parameters (`; charset=utf-8`) and surrounding blanks removed, aliases resolved. */
export function normaliseType(type: string): string {
  const bare = (type.split(';')[0] ?? '').trim().toLowerCase();
  return lookup(ALIASES, bare) ?? bare;
}

/** How messages name a detected type: a label when we have one, the MIME type otherwise. */
function describeType(mime: string): string {
  const label = mime === 'application/zip' ? 'a zip archive' : lookup(BINARY_TYPES, mime) ?? Object.values(OFFICE_TYPES).find((t) => t.mime === mime)?.label;
  return label ? `${label} (${mime})` : `content of type ${mime}`;
}

async function sniff(bytes: Buffer): Promise<string | undefined> {
  const found = await sniffType(bytes);
  return found ? normaliseType(found.mime) : undefined;
}

async function verifyBinary(bytes: Buffer, declared: string): Promise<Verification> {
  const detected = await sniff(bytes);
  if (detected === undefined) return { ok: false, reason: `The bytes are not recognisable as the declared ${declared}.` };
  if (detected === declared || lookup(SAME_CONTAINER, declared)?.includes(detected)) return { ok: true, contentType: declared };
  return { ok: false, reason: `The bytes are ${describeType(detected)}, not the declared ${declared}.` };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

async function verifyText(bytes: Buffer, declared: string): Promise<Verification> {
  if (bytes.includes(0)) return { ok: false, reason: `The bytes contain NUL characters, so they are not the declared ${declared}.` };
  let decoded: string;
  try {
    decoded = utf8.decode(bytes);
  } catch {
    return { ok: false, reason: `The bytes are not valid UTF-8 text, so they are not the declared ${declared}.` };
  }
  const detected = await sniff(bytes);
  if (detected !== undefined) return { ok: false, reason: `The bytes are ${describeType(detected)}, not the declared ${declared}.` };
  if (declared === 'application/json') {
    try {
      JSON.parse(decoded);
    } catch {
      return { ok: false, reason: 'The bytes are not valid JSON, so they are not the declared application/json.' };
    }
  }
  return { ok: true, contentType: declared };
}

async function verifyZip(bytes: Buffer, bounds: Partial<ZipBounds>): Promise<Verification> {
  const zip = await inspectZip(bytes, bounds);
  return zip.ok ? { ok: true, contentType: 'application/zip' } : { ok: false, reason: zip.reason };
}

/**
 * Verify that `bytes` are what `declaredType` says. On success `contentType` is the normalised declared
 * type (lowercase, no parameters, aliases resolved). `opts` bounds the inflation of zip containers
 * (missing fields take the defaults). Never rejects.
 */
export async function verifyContent(bytes: Buffer, declaredType: string, opts: Partial<ZipBounds> = {}): Promise<Verification> {
  const declared = normaliseType(declaredType);
  try {
    const office = officeKindOf(declared);
    if (office !== undefined) return await verifyOfficePackage(bytes, office, opts);
    if (declared === 'application/zip') return await verifyZip(bytes, opts);
    if (TEXT_TYPES.has(declared)) return await verifyText(bytes, declared);
    if (lookup(BINARY_TYPES, declared) !== undefined) return await verifyBinary(bytes, declared);
    return { ok: false, reason: `The content type ${declared || '(empty)'} is not supported for uploads.` };
  } catch {
    return { ok: false, reason: `The bytes could not be verified as the declared ${declared}.` };
  }
}
