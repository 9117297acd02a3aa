/**
 * Raw request bodies (issue 9 point 3: "a route declares its request body: JSON, multipart/form-data,
 * or raw bytes"): the whole body is one file, its Content-Type one of the route's allow-list, read as a
 * stream under the route's byte bound. The bytes become one file part (`body.part`), as if uploaded in
 * a form, so translators, probes and the meters' `files:/<part>` read them as they read a multipart
 * part; the route's other parameters come from its `query_fields`.
 */
import type { Readable } from 'node:stream';
import { GatewayError } from '../errors.js';
import { collectBounded, declaredLength } from '../files/bytes.js';
import { fileTooLarge, mediaType, type FilePartSpec, type MultipartSpec, type UploadedFile } from './multipart.js';

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

/**
 * Reads the body stream into one file part, refusing it past `maxBytes` before more is kept: a
 * Content-Length above the bound is refused without reading (a malformed one counts as absent), a body
 * that grows past it as soon as it does. The rest of a refused body is drained so the connection stays
 * usable.
 */
export async function readRawBody(stream: Readable, contentLength: string | undefined, type: string, spec: RawBodySpec): Promise<UploadedFile> {
  const data = await collectBounded(stream, {
    maxBytes: spec.maxBytes, declared: declaredLength(contentLength), rest: 'drain',
    tooLarge: () => fileTooLarge(spec.oversize, spec.part, spec.maxBytes),
  }).catch((error: unknown) => {
    throw error instanceof GatewayError ? error : new GatewayError('invalid_request', 'The request body could not be read.');
  });
  if (data.length === 0) throw new GatewayError('invalid_request', `The request body is empty; send the bytes of the '${spec.part}'.`, { param: spec.part });
  return { field: spec.part, filename: spec.part, contentType: type, data };
}

/** The raw body as a one-part form declaration, for the probes of src/pipeline/file-probes.ts. */
export function asMultipartSpec(spec: RawBodySpec): MultipartSpec {
  return { files: { [spec.part]: { maxBytes: spec.maxBytes, mime: spec.mime, min: 1, max: 1, ...(spec.probe ? { probe: spec.probe } : {}) } }, maxFields: 0, fieldMaxBytes: 0 };
}
