/**
 * Publishing a skills execution's outputs (spec 4.6 rules 4 and 5): each file the vendor generated is
 * copied into the blob store and recorded as a downloadable `file_gw_` file of the account, sharing
 * its quota, after the execution was billed. A `.pptx` the vendor labels as ZIP is accepted only after
 * package verification and recorded with the presentation MIME type; any other output must verify as
 * its own type.
 */
import { Readable } from 'node:stream';
import type { Clock } from '../clock.js';
import type { CompiledProvider, FilesSettings } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { randomId } from '../ledger/ids.js';
import type { Db } from '../store/types.js';
import { readBounded } from '../upstream/body.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { BlobStore } from './blob/types.js';
import { FILE_OPERATIONS } from './message-files.js';
import { reserveMessageFile, type MessageFileRecord } from './message-records.js';
import { verifyContent, verifyOfficePackage } from './verify/index.js';

/** Vendor metadata of a generated file (the Files API's FileMetadata). */
interface VendorFile { id: string; filename?: string; mime_type?: string; size_bytes?: number }

/** What publishing needs. */
export interface PublishDeps { db: Db; blobs: BlobStore; upstream: UpstreamClient; clock: Clock; settings: () => FilesSettings }

/** A metadata answer (JSON) is small; a download is bounded by its operation's declared `answer.max_bytes`. */
const METADATA_MAX_BYTES = 1024 * 1024;

async function vendorCall(deps: PublishDeps, provider: CompiledProvider, operation: string, fileId: string, signal: AbortSignal): Promise<Buffer> {
  const res = await deps.upstream.send(provider, operation, null, signal, { pathParams: { file_id: fileId } });
  const bytes = await readBounded(res, provider.operations[operation]?.binary?.maxBytes ?? METADATA_MAX_BYTES);
  if (res.status >= 400) throw new GatewayError('upstream_error', `The file store answered ${res.status} for a generated file.`);
  return bytes;
}

/** The verified MIME type of an output, or a failure naming the file. */
async function verifiedType(file: VendorFile, bytes: Buffer): Promise<string> {
  const name = file.filename ?? file.id;
  const declared = (file.mime_type ?? 'application/octet-stream').toLowerCase();
  const verdict = declared === 'application/zip' && name.toLowerCase().endsWith('.pptx')
    ? await verifyOfficePackage(bytes, 'pptx')
    : await verifyContent(bytes, declared);
  if (!verdict.ok) throw new GatewayError('upstream_error', `The generated file ${name} did not verify: ${verdict.reason}`);
  return verdict.contentType;
}

/** Copies one generated vendor file into the account's files; resolves to its record. */
export async function publishGenerated(
  deps: PublishDeps, accountId: string, provider: CompiledProvider, vendorFileId: string, containerId: string, signal: AbortSignal,
): Promise<MessageFileRecord> {
  const file = JSON.parse((await vendorCall(deps, provider, FILE_OPERATIONS.get, vendorFileId, signal)).toString('utf8')) as VendorFile;
  const bytes = await vendorCall(deps, provider, FILE_OPERATIONS.content, vendorFileId, signal);
  const mimeType = await verifiedType(file, bytes);
  const now = deps.clock.now();
  const id = randomId('file_gw_');
  const record: MessageFileRecord = {
    id, accountId, state: 'active', origin: 'generated', providerId: provider.id, vendorFileId, filename: file.filename ?? `${id}`,
    mimeType, sizeBytes: bytes.length, downloadable: true, blobKey: `generated/${accountId}/${id}`, containerId,
    createdAt: now, expiresAt: new Date(now.getTime() + deps.settings().messages.defaultTtlMs),
  };
  await deps.blobs.write(record.blobKey!, Readable.from([bytes]), { maxBytes: bytes.length, contentType: mimeType });
  const refused = await reserveMessageFile(deps.db, record, deps.settings().messages, now);
  if (refused) {
    await deps.blobs.delete(record.blobKey!);
    throw new GatewayError('file_quota_exceeded', `A generated file does not fit the account's file quota (${refused.files} files, ${refused.bytes} bytes held).`);
  }
  return record;
}
