/**
 * A model's own limits on a route's multipart file parts (provider manifest `offerings[].files`;
 * spec 4.14: "The selected model may accept fewer references"), checked once the model is known and
 * before anything is reserved: how many parts of a name, how large each, of which (verified) types,
 * and whether an image must be square (its header's width and height, from `probe: image`). A part
 * outside them is a 400 naming the part and the model's limit.
 */
import type { OfferingFileLimit } from '../config/types.js';
import { GatewayError } from '../errors.js';
import type { UploadedFile } from '../bodies/multipart.js';

function refuse(part: string, model: string, what: string): GatewayError {
  return new GatewayError('invalid_request', `The model "${model}" ${what} in '${part}'.`, { param: part });
}

/** Checks one file against its part's limit. */
function checkFile(file: UploadedFile, limit: OfferingFileLimit, model: string): void {
  if (limit.maxBytes !== undefined && file.data.length > limit.maxBytes) throw refuse(file.field, model, `takes files of at most ${limit.maxBytes} bytes`);
  const type = file.contentType.split(';')[0]!.trim().toLowerCase();
  if (limit.mime && !limit.mime.has(type)) throw refuse(file.field, model, `takes only ${[...limit.mime].join(', ')} (this file is ${type || 'of no declared type'})`);
  if (limit.square) {
    const { width, height } = file.facts ?? {};
    if (width === undefined || height === undefined || width !== height) throw refuse(file.field, model, 'takes only square images (width equal to height)');
  }
}

/** Refuses the request's files the model cannot take, by its declared limits per part. */
export function checkOfferingFiles(files: readonly UploadedFile[], limits: Readonly<Record<string, OfferingFileLimit>> | undefined, model: string): void {
  for (const [part, limit] of Object.entries(limits ?? {})) {
    const mine = files.filter((f) => f.field === part);
    if (limit.max !== undefined && mine.length > limit.max) {
      throw refuse(part, model, limit.max === 0 ? 'takes no file' : `takes at most ${limit.max} file${limit.max === 1 ? '' : 's'}`);
    }
    for (const file of mine) checkFile(file, limit, model);
  }
}
