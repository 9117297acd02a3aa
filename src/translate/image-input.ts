/**
 * An image a client sends inline (spec 4.11, 4.12: "base64 or data URL"), or a temporary file that
 * `file_inputs` put inline: decoded and checked against an operation's limits when the translator is
 * created, so a refusal is a 400 naming the parameter before anything is reserved. The format (from
 * the magic bytes, never from a declared type) and the size are read by the one image header reader,
 * src/files/verify/dimensions.ts (TIFF sizes are left to the vendor).
 */
import { GatewayError } from '../errors.js';
import { parseDataUrl } from '../data-url.js';
import { imageDimensions, imageFormat, type ImageFormat } from '../files/verify/dimensions.js';

/** What an operation accepts. */
export interface ImageLimits {
  maxBytes: number;
  formats: readonly ImageFormat[];
  /** Smallest and largest side in pixels, where the header tells. */
  minSide: number;
  maxSide: number;
}

/** A decoded, checked image. */
export interface ImageInput { bytes: Buffer; format: ImageFormat; /** Canonical base64 of the bytes. */ base64: string }

/**
 * Base64 (standard or URL-safe alphabet, padded or not, line breaks allowed) to bytes; null when the
 * text is not base64 or decodes to nothing.
 */
export function decodeBase64(text: string): Buffer | null {
  const compact = /\s/.test(text) ? text.replace(/[\t\n\r ]+/g, '') : text;
  if (!/^(?:[A-Za-z0-9+/]*|[A-Za-z0-9_-]*)={0,2}$/.test(compact)) return null;
  const data = compact.replace(/=+$/, '');
  const padded = compact.length !== data.length;
  if (data.length % 4 === 1 || (padded && compact.length % 4 !== 0)) return null;
  const bytes = Buffer.from(data, 'base64');
  return bytes.length > 0 ? bytes : null;
}

/** The base64 payload of a data URL (`data:<type>[;params];base64,<payload>`), the text itself otherwise, or null for a data URL that is not base64. */
export function base64Payload(value: string): string | null {
  if (!/^data:/i.test(value)) return value;
  const url = parseDataUrl(value);
  return url?.base64 ? url.payload : null;
}

/** Decodes and checks `value` (base64 or a data URL) under `limits`; a 400 naming `param` otherwise. */
export function readImageInput(value: unknown, param: string, limits: ImageLimits): ImageInput {
  const refuse = (message: string) => new GatewayError('invalid_request', message, { param });
  if (typeof value !== 'string') throw refuse(`'${param}' must be a base64 string or a data URL.`);
  const text = base64Payload(value);
  const bytes = text === null ? null : decodeBase64(text);
  if (!bytes) throw refuse(`'${param}' is not valid base64: send the image as base64, or as a data URL with base64 content (data:image/png;base64,...).`);
  if (bytes.length > limits.maxBytes) throw refuse(`The image is ${bytes.length} bytes; the limit is ${limits.maxBytes} bytes.`);
  const format = imageFormat(bytes);
  const names = limits.formats.map((f) => f.toUpperCase());
  if (!format || !limits.formats.includes(format)) throw refuse(`'${param}' is not a ${names.slice(0, -1).join(', ')} or ${names.at(-1)} image (judged by its first bytes).`);
  const size = imageDimensions(bytes);
  if (size && (Math.min(size.width, size.height) < limits.minSide || Math.max(size.width, size.height) > limits.maxSide)) {
    throw refuse(`The image is ${size.width} x ${size.height} pixels; it must be from ${limits.minSide} x ${limits.minSide} to ${limits.maxSide} x ${limits.maxSide}.`);
  }
  return { bytes, format, base64: bytes.toString('base64') };
}
