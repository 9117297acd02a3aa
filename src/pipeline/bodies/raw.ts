/**
 * Raw request bodies (issue 9 point 3: "a route declares its request body: JSON, multipart/form-data,
 * or raw bytes"): the whole body is one file, its Content-Type one of the route's allow-list, read as a
 * stream under the route's byte bound. The bytes become one file part (`body.part`), as if uploaded in
 * a form, so translators, probes and the meters' `files:/<part>` read them as they read a multipart
 * part; the route's other parameters come from its `query_fields`.
 */
import type { Readable } from 'node:stream';
import { GatewayError } from '../../errors.js';
import { mediaType, type FilePartSpec, type MultipartSpec, type UploadedFile } from './multipart.js';

/** A route's raw body declaration (`body: {type: raw}`). */
export interface RawBodySpec {
  /** The file part the bytes become (`body.part`, default `file`). */
  part: string;
  maxBytes: number;
  /** Accepted Content-Types, lower case, without parameters. */
  mime: ReadonlySet<string>;
  /** The error of a body over `maxBytes`, as a multipart part's (`body.oversize`). */
  oversize: NonNullable<MultipartSpec['oversize']>;
  probe?: FilePartSpec['probe'];
}

/** The 400 for a body of a type the route does not take (spec 7 has no 415), naming the accepted ones. */
export function unsupportedRawType(spec: RawBodySpec, type: string): GatewayError {
  const given = type ? `'${type}'` : 'no Content-Type';
  return new GatewayError('invalid_request', `Unsupported Content-Type (${given}); send the bytes of the '${spec.part}' as one of: ${[...spec.mime].join(', ')}.`);
}

/** The body's media type when the route accepts it. */
export function acceptedRawType(contentType: string | undefined, spec: RawBodySpec): string {
  const type = mediaType(contentType);
  if (spec.mime.has(type)) return type;
  throw unsupportedRawType(spec, type);
}

function tooLarge(spec: RawBodySpec): GatewayError {
  return new GatewayError(spec.oversize, `The file in '${spec.part}' is larger than ${spec.maxBytes} bytes.`, { param: spec.part });
}

/**
 * Reads the body stream into one file part, refusing it past `maxBytes` before more is kept: a
 * Content-Length above the bound is refused without reading, a body that grows past it as soon as it
 * does. The rest of a refused body is drained so the connection stays usable.
 */
export function readRawBody(stream: Readable, declaredLength: string | undefined, type: string, spec: RawBodySpec): Promise<UploadedFile> {
  if (declaredLength !== undefined && Number(declaredLength) > spec.maxBytes) {
    stream.resume();
    return Promise.reject(tooLarge(spec));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= spec.maxBytes) { chunks.push(chunk); return; }
      stream.off('data', onData);
      stream.resume();
      reject(tooLarge(spec));
    };
    stream.on('data', onData);
    stream.on('error', () => reject(new GatewayError('invalid_request', 'The request body could not be read.')));
    stream.on('end', () => {
      if (size > spec.maxBytes) return;
      if (size === 0) { reject(new GatewayError('invalid_request', `The request body is empty; send the bytes of the '${spec.part}'.`, { param: spec.part })); return; }
      resolve({ field: spec.part, filename: spec.part, contentType: type, data: Buffer.concat(chunks, size) });
    });
  });
}

/** The raw body as a one-part form declaration, for the probes of src/pipeline/file-probes.ts. */
export function asMultipartSpec(spec: RawBodySpec): MultipartSpec {
  return { files: { [spec.part]: { maxBytes: spec.maxBytes, mime: spec.mime, min: 1, max: 1, ...(spec.probe ? { probe: spec.probe } : {}) } }, maxFields: 0, fieldMaxBytes: 0 };
}
