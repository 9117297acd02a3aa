/**
 * Image headers, the one reader of them: the format by its magic bytes (never a declared type), and
 * the pixel size of a PNG, JPEG, GIF, BMP or WebP image (no decoding), for every check of an image's
 * size. A video reference image must have exactly the requested size (spec 4.16), a flex image is
 * billed by the size it actually has (spec 4.14), and inline images and uploads are held to an
 * operation's pixel limits (src/translate/image-input.ts, file probes).
 * Pure; null when the bytes are not a readable image of these types (TIFF sizes are left to the vendor).
 */

/** The image formats recognised by their first bytes. */
export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'bmp' | 'tiff' | 'webp';

/** The format by magic bytes, or undefined. */
export function imageFormat(b: Buffer): ImageFormat | undefined {
  const ascii = (from: number, to: number) => b.subarray(from, to).toString('latin1');
  if (ascii(0, 8) === '\x89PNG\r\n\x1a\n') return 'png';
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (ascii(0, 6) === 'GIF87a' || ascii(0, 6) === 'GIF89a') return 'gif';
  if (ascii(0, 2) === 'BM') return 'bmp';
  if (ascii(0, 4) === 'II*\u0000' || ascii(0, 4) === 'MM\u0000*') return 'tiff';
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'webp';
  return undefined;
}

/** Width and height in pixels. */
export interface Dimensions { width: number; height: number }

// Each reader below is given bytes whose magic imageFormat has recognised, and checks only the rest.

/** PNG: the IHDR chunk comes first, width and height as big-endian 32-bit integers. */
function png(b: Buffer): Dimensions | null {
  if (b.length < 24 || b.toString('latin1', 12, 16) !== 'IHDR') return null;
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

/** JPEG start-of-frame markers (SOF0-SOF15 without DHT 0xC4, JPG 0xC8 and DAC 0xCC) carry the size. */
const isStartOfFrame = (marker: number): boolean => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

/** JPEG: walks the marker segments to the first start of frame (height before width). */
function jpeg(b: Buffer): Dimensions | null {
  let at = 2;
  while (at + 4 <= b.length) {
    if (b[at] !== 0xff) return null;
    const marker = b[at + 1]!;
    // Fill bytes and standalone markers (RSTn, TEM) have no length.
    if (marker === 0xff) { at += 1; continue; }
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) { at += 2; continue; }
    const length = b.readUInt16BE(at + 2);
    if (length < 2) return null;
    if (isStartOfFrame(marker)) return at + 9 <= b.length ? { height: b.readUInt16BE(at + 5), width: b.readUInt16BE(at + 7) } : null;
    at += 2 + length;
  }
  return null;
}

/** GIF (87a or 89a): the logical screen's width and height, little-endian 16-bit. */
function gif(b: Buffer): Dimensions | null {
  if (b.length < 10) return null;
  return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
}

/** BMP: the info header's signed 32-bit width and height (a negative height is a top-down bitmap). */
function bmp(b: Buffer): Dimensions | null {
  if (b.length < 26) return null;
  return { width: Math.abs(b.readInt32LE(18)), height: Math.abs(b.readInt32LE(22)) };
}

/** WebP: lossy (VP8, 14-bit sizes in the key frame), lossless (VP8L, 14-bit packed) or extended (VP8X, 24-bit). */
function webp(b: Buffer): Dimensions | null {
  if (b.length < 30) return null;
  const chunk = b.toString('latin1', 12, 16);
  if (chunk === 'VP8X') return { width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
  if (chunk === 'VP8L') {
    if (b[20] !== 0x2f) return null;
    const bits = b.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
  }
  if (chunk === 'VP8 ') {
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return null;
    return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  }
  return null;
}

/** The size reader of each format whose header carries one (TIFF sizes are left to the vendor). */
const READERS: Partial<Record<ImageFormat, (b: Buffer) => Dimensions | null>> = { png, jpeg, gif, bmp, webp };

/** The image's size, or null when it is not a PNG, JPEG, GIF, BMP or WebP whose header can be read. */
export function imageDimensions(bytes: Buffer): Dimensions | null {
  const format = imageFormat(bytes);
  const found = format ? READERS[format]?.(bytes) ?? null : null;
  return found && found.width > 0 && found.height > 0 ? found : null;
}
