/**
 * Messages-format file references in a request (spec 4.4): content blocks (`document`, `image`, also
 * inside tool results) whose `source` is `{type: "file", file_id: "file_gw_..."}`. Resolved after
 * auth and before anything is reserved: another account's or an unknown id is 404 file_not_found;
 * `messages-files` rewrites each to the vendor's id and marks the request as using the operation's
 * `files` feature; `count-unsupported` refuses an owned reference (count_tokens cannot estimate a file).
 */
import { modelById } from '../config/aliases.js';
import { GatewayError } from '../errors.js';
import type { RouteManifest } from '../generated/manifest-types.js';
import type { RequestContext } from './context.js';
import { fileServices } from './local/temp-files.js';
import type { Runtime } from './stage.js';

type Policy = NonNullable<RouteManifest['file_references']>;
interface FileSource { type: 'file'; file_id: string }

function isFileSource(value: unknown): value is FileSource {
  const v = value as Partial<FileSource> | null;
  return typeof v === 'object' && v !== null && v.type === 'file' && typeof v.file_id === 'string';
}

/** Every `source: {type: "file"}` object under the messages, in order. */
export function fileSources(messages: unknown): FileSource[] {
  const found: FileSource[] = [];
  const walk = (node: unknown, depth: number): void => {
    if (depth > 64 || typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) { for (const item of node) walk(item, depth + 1); return; }
    const source = (node as { source?: unknown }).source;
    if (isFileSource(source)) found.push(source);
    for (const [key, value] of Object.entries(node)) if (key !== 'source') walk(value, depth + 1);
  };
  walk(messages, 0);
  return found;
}

/** Resolves (or refuses) the request's file references under the route's policy. */
export async function resolveFileReferences(ctx: RequestContext, runtime: Runtime, policy: Policy): Promise<void> {
  const sources = fileSources(ctx.body.messages);
  if (sources.length === 0) return;
  const files = fileServices(runtime).messages;
  if (!files) throw new GatewayError('invalid_request', 'File references are not supported on this gateway.');
  const accountId = ctx.auth!.accountId;
  const offering = typeof ctx.body.model === 'string' ? modelById(ctx.gateway, ctx.body.model) : undefined;
  const vendorIds = new Map<string, string>();
  for (const source of sources) {
    const record = await files.get(accountId, source.file_id);
    if (policy === 'count-unsupported') {
      throw new GatewayError('file_token_count_unsupported', 'count_tokens cannot count a stored file: its contents are not estimated from the id.');
    }
    // The file lives at one vendor (issue 29 item 8): only the offering's deployments there may serve the request.
    if (offering && !offering.deployments.some((d) => d.provider.id === record.providerId)) {
      throw new GatewayError('invalid_request', `The file "${record.id}" cannot be used with the model "${offering.id}".`, { param: 'messages' });
    }
    if (ctx.pinnedProvider !== undefined && ctx.pinnedProvider !== record.providerId) {
      throw new GatewayError('invalid_request', `The file "${record.id}" is held by another source than the request's other files.`, { param: 'messages' });
    }
    ctx.pinnedProvider = record.providerId;
    vendorIds.set(source.file_id, record.vendorFileId!);
  }
  for (const source of sources) source.file_id = vendorIds.get(source.file_id)!;
  ctx.features.push('files');
}
