/**
 * The temporary-file routes answered by the gateway itself (spec 4.7): authorize an upload and
 * finalize it. Both are free (spec 1) and need a key of the owning account.
 */
import { GatewayError } from '../../errors.js';
import { requestOrigin } from '../origin.js';
import type { FileServices } from '../../files/index.js';
import type { RequestContext } from '../context.js';
import type { Runtime } from '../stage.js';

/** The file services, or a 503 when this process runs without them. */
export function fileServices(runtime: Runtime): FileServices {
  if (!runtime.files) throw new GatewayError('upstream_unavailable', 'File storage is not configured on this gateway.');
  return runtime.files;
}

export { requestOrigin } from '../origin.js';

/** POST /v1/gateway/files/upload-authorizations */
export async function authorizeUpload(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const files = fileServices(runtime);
  const body = ctx.body as { purpose: string; content_type: string; byte_size: number };
  const answer = await files.temp.authorize(ctx.auth!.accountId, body, requestOrigin(ctx, files));
  ctx.started = true;
  await ctx.reply.send(answer);
}

/** POST /v1/gateway/files/{file_id}/finalize */
export async function finalizeUpload(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const answer = await fileServices(runtime).temp.finalize(ctx.auth!.accountId, ctx.params.file_id ?? '');
  ctx.started = true;
  await ctx.reply.send(answer);
}
