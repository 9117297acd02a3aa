/**
 * `multipart/form-data` request bodies (issue 9 point 3), parsed as a stream with explicit limits per
 * part, as the route declares them: which file parts exist, how many of each, how large, and of which
 * MIME types; how many text fields and how large. A part outside the declaration is refused before its
 * bytes are kept. The text fields become the request body (validated by the route's JSON Schema, types
 * coerced from their text); the files travel beside it. A field named `x[]` (or repeated) is a list.
 */
import type { Readable } from 'node:stream';
import { Busboy, type BusboyFileStream } from '@fastify/busboy';
import { GatewayError } from '../errors.js';
import { collectBounded, type ByteTally } from '../files/bytes.js';

/** One file part as the route declares it. */
export interface FilePartSpec {
  maxBytes: number; mime: ReadonlySet<string> | null; min: number; max: number;
  /** Measured before anything is reserved (src/pipeline/file-probes.ts): `audio` reads the duration; `docx`, `pdf` verify and measure a document. */
  probe?: 'audio' | 'image' | 'docx' | 'pdf';
}

/** A route's multipart declaration. */
export interface MultipartSpec {
  files: Readonly<Record<string, FilePartSpec>>; maxFields: number; fieldMaxBytes: number;
  /** A JSON body is accepted too (`body.json`); the parts' `min` is then checked after the file inputs. */
  acceptsJson?: boolean;
  /** Fields a JSON body may not carry (`body.json_refuses`; spec 4.14: JSON edits take no style, response_format or mask). */
  jsonRefuses?: readonly string[];
  /** Most bytes of all file parts together (`body.max_total_bytes`; spec 4.14: up to 16 images). */
  maxTotalBytes?: number;
  /**
   * The error of a file part over its size (`body.oversize`): `payload_too_large` (413, the default,
   * as the vendors' own upload APIs answer) or `invalid_request` (400: issue 12, documents).
   */
  oversize?: 'payload_too_large' | 'invalid_request';
}

/** A received file part. */
export interface UploadedFile {
  field: string; filename: string; contentType: string; data: Buffer;
  /** What a probe measured (src/pipeline/file-probes.ts), for the meters' `files:` values. */
  facts?: Readonly<Record<string, number>>;
}

/** The parsed body: text fields (strings, or lists for repeated names) and files. */
export interface MultipartBody { fields: Record<string, string | string[]>; files: UploadedFile[]; }

/** The declared media type of a Content-Type header: lower case, parameters dropped ('' when absent). */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** A part's field name without a trailing `[]`; a part with no name (or a NUL in it) is the client's 400. */
function listName(name: string | undefined): string {
  if (typeof name !== 'string' || name === '' || name.includes('\0')) throw new GatewayError('invalid_request', 'A multipart part has no valid name in its Content-Disposition.');
  return name.endsWith('[]') ? name.slice(0, -2) : name;
}

/** A part's declared file name and type, which reach the store and the vendor: no control characters. */
function checkPartText(field: string, filename: string, mimeType: string): void {
  if (/[\x00-\x1f\x7f]/.test(filename) || /[\x00-\x1f\x7f]/.test(mimeType)) {
    throw new GatewayError('invalid_request', `The file in '${field}' has a control character in its file name or type.`, { param: field });
  }
}

function addField(fields: Record<string, string | string[]>, name: string, value: string): void {
  const key = listName(name);
  const existing = fields[key];
  if (existing === undefined) fields[key] = name.endsWith('[]') ? [value] : value;
  else fields[key] = Array.isArray(existing) ? [...existing, value] : [existing, value];
}

/** The error code of a file part over its size. */
type OversizeCode = NonNullable<MultipartSpec['oversize']>;

/** The refusal of a file part (or a raw body's one file) larger than its bound, naming it. */
export function fileTooLarge(code: OversizeCode, field: string, maxBytes: number): GatewayError {
  return new GatewayError(code, `The file in '${field}' is larger than ${maxBytes} bytes.`, { param: field });
}

/**
 * Reads one file part into memory, refusing it past its declared size or once the form's parts together
 * pass `total` (the route's `max_total_bytes`); the rest of a refused part is drained so the parser goes on.
 */
function collect(stream: BusboyFileStream, field: string, spec: FilePartSpec, total: ByteTally, oversize: OversizeCode): Promise<Buffer> {
  return collectBounded(stream, {
    maxBytes: spec.maxBytes, rest: 'drain',
    tooLarge: () => fileTooLarge(oversize, field, spec.maxBytes),
    shared: { tally: total, tooLarge: () => new GatewayError(oversize, `The files of this request are larger than ${total.maxBytes} bytes together (at '${field}').`, { param: field }) },
  });
}

/** Checks a file part's name, count and declared type before its bytes are read. */
function admitFile(spec: MultipartSpec, counts: Map<string, number>, name: string, mimeType: string): FilePartSpec {
  const field = listName(name);
  const part = spec.files[field];
  if (!part) throw new GatewayError('invalid_request', `Unexpected file part '${field}' (this endpoint takes files in: ${Object.keys(spec.files).join(', ') || 'none'}).`, { param: field });
  const count = (counts.get(field) ?? 0) + 1;
  if (count > part.max) throw new GatewayError('invalid_request', `At most ${part.max} file${part.max === 1 ? '' : 's'} in '${field}'.`, { param: field });
  counts.set(field, count);
  const type = mediaType(mimeType);
  if (part.mime && !part.mime.has(type)) throw new GatewayError('invalid_request', `The file in '${field}' is ${type || 'of no declared type'}; supported: ${[...part.mime].join(', ')}.`, { param: field });
  return part;
}

/** Parses a multipart body under `spec`; a GatewayError (400 or 413, naming the part) for anything outside it. */
export function readMultipart(stream: Readable, contentType: string, spec: MultipartSpec): Promise<MultipartBody> {
  // Busboy passes a file on up to its `fileSize` and drops the rest: one byte past the largest part, so
  // every oversized part reaches the collector's count (src/files/bytes.ts), which refuses it.
  const largest = Math.max(0, ...Object.values(spec.files).map((f) => f.maxBytes));
  const maxFiles = Object.values(spec.files).reduce((n, f) => n + f.max, 0);
  return new Promise((resolve, reject) => {
    // No prototype: a field named `__proto__` is just an unknown field.
    const fields: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
    const files: Array<Promise<UploadedFile>> = [];
    const counts = new Map<string, number>();
    const total: ByteTally = { used: 0, maxBytes: spec.maxTotalBytes ?? Number.POSITIVE_INFINITY };
    const oversize: OversizeCode = spec.oversize ?? 'payload_too_large';
    let failed = false;
    const fail = (error: unknown): void => {
      if (failed) return;
      failed = true;
      stream.unpipe(parser);
      stream.resume();
      reject(error);
    };
    let parser: ReturnType<typeof Busboy>;
    try {
      parser = Busboy({ headers: { 'content-type': contentType }, limits: { fileSize: largest + 1, files: maxFiles, fields: spec.maxFields, fieldSize: spec.fieldMaxBytes, parts: maxFiles + spec.maxFields } });
    } catch {
      reject(new GatewayError('invalid_request', 'The multipart body has no boundary in its Content-Type.'));
      return;
    }
    parser.on('file', (name, file, filename, _encoding, mimeType) => {
      if (failed) { file.resume(); return; }
      try {
        const part = admitFile(spec, counts, name, mimeType);
        checkPartText(listName(name), filename ?? '', mimeType ?? '');
        files.push(collect(file, listName(name), part, total, oversize).then((data) => ({ field: listName(name), filename, contentType: mimeType, data })));
        files.at(-1)!.catch(fail);
      } catch (error) {
        file.resume();
        fail(error);
      }
    });
    // Every handler of a parser event catches its own errors: a throw there would escape the promise and hang the request.
    parser.on('field', (name, value, _nameTruncated, valueTruncated) => {
      try {
        const field = listName(name);
        if (valueTruncated) throw new GatewayError('payload_too_large', `The field '${field}' is longer than ${spec.fieldMaxBytes} bytes.`, { param: field });
        addField(fields, name, value);
      } catch (error) {
        fail(error);
      }
    });
    parser.on('filesLimit', () => fail(new GatewayError('invalid_request', `Too many files (at most ${maxFiles}).`)));
    parser.on('fieldsLimit', () => fail(new GatewayError('invalid_request', `Too many fields (at most ${spec.maxFields}).`)));
    parser.on('partsLimit', () => fail(new GatewayError('invalid_request', 'Too many parts in the multipart body.')));
    parser.on('error', () => fail(new GatewayError('invalid_request', 'The multipart body is malformed.')));
    parser.on('finish', () => {
      if (failed) return;
      Promise.all(files).then((received) => {
        for (const [field, part] of Object.entries(spec.files)) {
          const n = received.filter((f) => f.field === field).length;
          if (n < part.min) throw new GatewayError('invalid_request', `Missing required file part '${field}'.`, { param: field });
        }
        resolve({ fields, files: received });
      }).catch(fail);
    });
    stream.on('error', fail);
    stream.pipe(parser);
  });
}
