/**
 * Temporary files as request inputs (spec 2 "Temporary file" purposes, 4.7 rule 3; consumers in 4.8
 * to 4.14): a route's `file_inputs` names the body fields that may carry a finalized `tfile_` id, the
 * purposes each accepts, and the field that receives the bytes. Run as a route step after auth and
 * before anything is reserved: the id is resolved for the caller's account (unknown or another
 * account's: 404 file_not_found; pending: 400 file_not_finalized; expired: 404 file_expired; another
 * purpose: 400 file_purpose_mismatch), its bytes replace it as base64 in the `into` field, and the
 * named field is removed, so upstream choice and the translator see one input form. With
 * `into: {file: <part>}` the file becomes that multipart file part instead (spec 4.8: audio `file_id`).
 */
import { GatewayError } from '../errors.js';
import type { RouteManifest } from '../generated/manifest-types.js';
import type { RequestContext } from './context.js';
import { fileServices } from './local/temp-files.js';
import type { Runtime } from './stage.js';

type Policy = NonNullable<RouteManifest['file_inputs']>;

/** File name extensions by verified type: vendors that read the format from the part's name (spec 4.8 audio) need one. */
const EXTENSIONS: Readonly<Record<string, string>> = {
  'audio/mpeg': 'mp3', 'audio/wav': 'wav', 'audio/x-wav': 'wav', 'audio/vnd.wave': 'wav', 'audio/mp4': 'm4a', 'audio/webm': 'webm',
  'audio/ogg': 'ogg', 'audio/flac': 'flac', 'audio/x-flac': 'flac', 'image/png': 'png', 'image/jpeg': 'jpg', 'application/pdf': 'pdf',
};

/**
 * `into: {file: <part>}`: the file becomes a multipart file part (ctx.files), as if the client had
 * uploaded it in the form; the named field is removed. A request that also sent the part is refused.
 */
async function intoFilePart(ctx: RequestContext, runtime: Runtime, field: string, id: string, purposes: readonly string[], part: string): Promise<void> {
  if (ctx.files.some((f) => f.field === part)) {
    throw new GatewayError('invalid_request', `Provide either '${field}' or the file part '${part}', not both.`, { param: field });
  }
  const temp = fileServices(runtime).temp;
  const record = await temp.resolve(ctx.auth!.accountId, id, purposes);
  const data = await temp.bytes(record);
  const contentType = record.detectedType ?? record.contentType;
  const { [field]: _named, ...rest } = ctx.body;
  ctx.body = rest;
  ctx.files = [...ctx.files, { field: part, filename: `${record.id}.${EXTENSIONS[contentType] ?? 'bin'}`, contentType, data }];
  (ctx.inputFiles ??= []).push({ field: part, fileId: record.id, contentType });
}

/** Puts each temporary file the request names into its `into` field (or file part), under the route's policy. */
export async function resolveFileInputs(ctx: RequestContext, runtime: Runtime, policy: Policy): Promise<void> {
  for (const [field, rule] of Object.entries(policy)) {
    const id = ctx.body[field];
    if (id === undefined) continue;
    // The request schema says so too; these guard a schema that does not (spec 4.11: exactly one input).
    if (typeof id !== 'string') throw new GatewayError('invalid_request', `'${field}' must be a file id.`, { param: field });
    if (typeof rule.into === 'object') { await intoFilePart(ctx, runtime, field, id, rule.purposes, rule.into.file); continue; }
    if (ctx.body[rule.into] !== undefined) {
      throw new GatewayError('invalid_request', `Provide either '${field}' or '${rule.into}', not both.`, { param: field });
    }
    const temp = fileServices(runtime).temp;
    const record = await temp.resolve(ctx.auth!.accountId, id, rule.purposes);
    const bytes = await temp.bytes(record);
    const { [field]: _named, ...rest } = ctx.body;
    ctx.body = { ...rest, [rule.into]: bytes.toString('base64') };
    (ctx.inputFiles ??= []).push({ field: rule.into, fileId: record.id, contentType: record.detectedType ?? record.contentType });
  }
}
