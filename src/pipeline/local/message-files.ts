/**
 * The messages-format file routes answered by the gateway (spec 4.5): upload, list, metadata, delete
 * and download. All free (spec 1); download works at zero balance. The vendor is the provider that
 * declares the file operations; no provider is named here.
 */
import type { CompiledGateway, CompiledProvider } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { FILE_OPERATIONS, fileMetadata } from '../../files/message-files.js';
import type { MessageFiles } from '../../files/message-files.js';
import type { RequestContext } from '../context.js';
import type { Runtime } from '../stage.js';
import { intQuery } from './query.js';
import { fileServices } from './temp-files.js';

/** The one provider that stores messages-format files (declares the upload operation). */
export function fileProvider(gateway: CompiledGateway): CompiledProvider {
  for (const provider of gateway.providers.values()) if (provider.operations[FILE_OPERATIONS.upload]) return provider;
  throw new GatewayError('upstream_unavailable', 'No provider of this gateway stores files.');
}

function messageFiles(runtime: Runtime): MessageFiles {
  const files = fileServices(runtime);
  if (!files.messages) throw new GatewayError('upstream_unavailable', 'Messages-format files are not configured on this gateway.');
  return files.messages;
}

/** POST /v1/files: one multipart `file`, optional `expires_in_seconds` (schema: 3600 to 86400). */
export async function uploadMessageFile(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const [file] = ctx.files;
  if (!file) throw new GatewayError('invalid_request', 'Send the file as the multipart part `file`.', { param: 'file' });
  const ttl = typeof ctx.body.expires_in_seconds === 'number' ? ctx.body.expires_in_seconds : null;
  const record = await messageFiles(runtime).upload(ctx.auth!.accountId, fileProvider(ctx.gateway), file, ttl, ctx.clientGone.signal);
  ctx.started = true;
  await ctx.reply.send(fileMetadata(record));
}

/** GET /v1/files?limit=&page= (page: the `next_page` of the previous answer; after_id is accepted as the SDK's cursor). */
export async function listMessageFilesRoute(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const query = ctx.req.query as Record<string, unknown>;
  const limit = intQuery(ctx, 'limit', 1, 1000, 20);
  const cursor = typeof query.page === 'string' ? query.page : typeof query.after_id === 'string' ? query.after_id : null;
  const { files, hasMore } = await messageFiles(runtime).list(ctx.auth!.accountId, limit, cursor);
  const data = files.map(fileMetadata);
  const last = files.at(-1)?.id ?? null;
  ctx.started = true;
  await ctx.reply.send({ data, has_more: hasMore, first_id: files[0]?.id ?? null, last_id: last, next_page: hasMore ? last : null });
}

/** GET /v1/files/{file_id} */
export async function getMessageFile(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const record = await messageFiles(runtime).get(ctx.auth!.accountId, ctx.params.file_id ?? '');
  ctx.started = true;
  await ctx.reply.send(fileMetadata(record));
}

/** DELETE /v1/files/{file_id}: safe to repeat. */
export async function deleteMessageFile(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const id = ctx.params.file_id ?? '';
  await messageFiles(runtime).delete(ctx.auth!.accountId, id, ctx.gateway.providers, ctx.clientGone.signal);
  ctx.started = true;
  await ctx.reply.send({ id, type: 'file_deleted' });
}

/** GET /v1/files/{file_id}/content: generated files only, as a download. */
export async function downloadMessageFile(ctx: RequestContext, runtime: Runtime): Promise<void> {
  const { record, data } = await messageFiles(runtime).content(ctx.auth!.accountId, ctx.params.file_id ?? '');
  ctx.started = true;
  const name = record.filename.replace(/["\\\r\n]/g, '_');
  await ctx.reply.header('content-type', record.mimeType).header('content-disposition', `attachment; filename="${name}"`).send(data);
}
