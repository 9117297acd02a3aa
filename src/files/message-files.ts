/**
 * Messages-format files (spec 4.5, 3, 8; issue 10 item 3): `file_gw_` ids mapped to the files the
 * messages-format vendor stores through its Files API, with the account's quotas kept here. Uploads
 * reserve their quota before the vendor call; an upload whose answer was lost keeps its reservation
 * until expiry and is never retried. Generated outputs (skills) live in the blob store once billed.
 * The vendor is whichever provider declares the file operations (no provider name in this module).
 */
import { Blob } from 'node:buffer';
import { FormData } from 'undici';
import type { Clock } from '../clock.js';
import type { CompiledProvider, FilesSettings } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { randomId } from '../ledger/ids.js';
import type { Db } from '../store/types.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { BlobStore } from './blob/types.js';
import { readAll } from './bytes.js';
import {
  findMessageFile, listMessageFiles, markMessageFileDeleted, markUncertain, markUploaded, markVendorReleased, messageFilesToRelease,
  reserveMessageFile, type MessageFileRecord,
} from './message-records.js';

/** The vendor operations, by the names provider manifests give them. */
export const FILE_OPERATIONS = { upload: 'files-upload', get: 'files-get', delete: 'files-delete', content: 'files-content' } as const;

/** The file record as the vendor's FileMetadata shape, with the gateway's id and its expiry. */
export function fileMetadata(r: MessageFileRecord): Record<string, unknown> {
  return {
    id: r.id, type: 'file', filename: r.filename, mime_type: r.mimeType, size_bytes: r.sizeBytes,
    created_at: r.createdAt.toISOString(), expires_at: r.expiresAt.toISOString(), downloadable: r.downloadable,
  };
}

/** What the service needs. */
export interface MessageFilesDeps {
  db: Db;
  blobs: BlobStore;
  upstream: UpstreamClient;
  clock: Clock;
  settings: () => FilesSettings;
}

const notFound = (id: string): GatewayError => new GatewayError('file_not_found', `No file "${id}" exists for this account.`);
const noRetry = { 'x-should-retry': 'false' };

/** The messages-format file service. */
export class MessageFiles {
  constructor(private readonly deps: MessageFilesDeps) {}

  /** POST /v1/files: reserve quota, store at the vendor, record the mapping. */
  async upload(accountId: string, provider: CompiledProvider, file: { filename: string; contentType: string; data: Buffer }, ttlSeconds: number | null, signal: AbortSignal): Promise<MessageFileRecord> {
    const { db, clock, settings } = this.deps;
    if (file.data.length === 0) throw new GatewayError('invalid_request', 'The file is empty.', { param: 'file' });
    const now = clock.now();
    const ttlMs = ttlSeconds === null ? settings().messages.defaultTtlMs : ttlSeconds * 1000;
    const record: MessageFileRecord = {
      id: randomId('file_gw_'), accountId, state: 'uploading', origin: 'upload', providerId: provider.id, vendorFileId: null,
      filename: file.filename || 'upload', mimeType: file.contentType || 'application/octet-stream', sizeBytes: file.data.length,
      downloadable: false, blobKey: null, containerId: null, createdAt: now, expiresAt: new Date(now.getTime() + ttlMs),
    };
    const refused = await reserveMessageFile(db, record, settings().messages, now);
    if (refused) throw quotaError(refused, settings().messages);
    const form = new FormData();
    form.append('file', new Blob([file.data], { type: record.mimeType }), record.filename);
    let stored: { id: string; size_bytes?: number; mime_type?: string };
    try {
      stored = await this.vendorJson(provider, FILE_OPERATIONS.upload, form, signal) as typeof stored;
    } catch (error) {
      if (error instanceof VendorRefused) {
        await markMessageFileDeleted(db, record.id, clock.now(), true);
        throw error.clientError;
      }
      // No answer: the vendor may hold the file. Keep the reservation until expiry; never retry (spec 3).
      await markUncertain(db, record.id);
      throw new GatewayError('upstream_error', `The upload's outcome is unknown; it was not retried and counts against your quota until ${record.expiresAt.toISOString()}.`, { headers: noRetry });
    }
    if (typeof stored?.id !== 'string') {
      await markUncertain(db, record.id);
      throw new GatewayError('upstream_error', 'The file store answered without a file id; the upload was not retried.', { headers: noRetry });
    }
    await markUploaded(db, record.id, stored.id, stored.size_bytes ?? record.sizeBytes, stored.mime_type ?? record.mimeType);
    return { ...record, state: 'active', vendorFileId: stored.id, sizeBytes: stored.size_bytes ?? record.sizeBytes, mimeType: stored.mime_type ?? record.mimeType };
  }

  /** An owned, usable file (active and unexpired); anything else is the same 404 (spec 4.5 rule 1). */
  async get(accountId: string, id: string): Promise<MessageFileRecord> {
    const record = await findMessageFile(this.deps.db, id);
    if (!record || record.accountId !== accountId || record.state !== 'active' || this.deps.clock.now() >= record.expiresAt) throw notFound(id);
    return record;
  }

  /** The account's usable files, newest first; `cursor` is the last id of the previous page. */
  async list(accountId: string, limit: number, cursor: string | null): Promise<{ files: MessageFileRecord[]; hasMore: boolean }> {
    const after = cursor ? await findMessageFile(this.deps.db, cursor) : null;
    if (cursor && (!after || after.accountId !== accountId)) throw new GatewayError('invalid_request', 'Unknown page.', { param: 'page' });
    const rows = await listMessageFiles(this.deps.db, accountId, this.deps.clock.now(), limit + 1, after ? { createdAt: after.createdAt, id: after.id } : null);
    return { files: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  /** DELETE: idempotent for the owner; the vendor copy is released now, or by the cleanup if the vendor fails. */
  async delete(accountId: string, id: string, providers: ReadonlyMap<string, CompiledProvider>, signal: AbortSignal): Promise<void> {
    const record = await findMessageFile(this.deps.db, id);
    if (!record || record.accountId !== accountId) throw notFound(id);
    if (record.state === 'deleted') return;
    const released = await this.releaseAtVendor(record, providers, signal);
    await markMessageFileDeleted(this.deps.db, record.id, this.deps.clock.now(), released);
  }

  /** GET .../content: generated outputs only (spec 4.5), from the blob store. */
  async content(accountId: string, id: string): Promise<{ record: MessageFileRecord; data: Buffer }> {
    const record = await this.get(accountId, id);
    if (!record.downloadable || !record.blobKey) throw new GatewayError('invalid_request', `The file "${id}" is an upload; only generated files can be downloaded.`);
    const stream = await this.deps.blobs.read(record.blobKey);
    if (!stream) throw notFound(id);
    return { record, data: await readAll(stream, record.sizeBytes) };
  }

  /**
   * The cleanup's part (spec 3): files past their lifetime stop being usable and their vendor copy and
   * blob are released; deletes whose vendor call failed are released again. Uncertain uploads simply
   * expire (their reservation ends; the vendor expires what it may hold by itself).
   */
  async cleanup(providers: ReadonlyMap<string, CompiledProvider>): Promise<{ message_files_expired: number; vendor_copies_released: number }> {
    const report = { message_files_expired: 0, vendor_copies_released: 0 };
    const now = this.deps.clock.now();
    const signal = AbortSignal.timeout(60_000);
    for (const record of await messageFilesToRelease(this.deps.db, now, 500)) {
      const released = await this.releaseAtVendor(record, providers, signal);
      if (released && record.vendorFileId) report.vendor_copies_released += 1;
      if (record.state === 'deleted') {
        if (released) await markVendorReleased(this.deps.db, record.id, now);
        continue;
      }
      if (record.blobKey) await this.deps.blobs.delete(record.blobKey);
      if (await markMessageFileDeleted(this.deps.db, record.id, now, released)) report.message_files_expired += 1;
    }
    return report;
  }

  /** Deletes the vendor's copy; false when the vendor could not be reached (the cleanup retries). */
  async releaseAtVendor(record: MessageFileRecord, providers: ReadonlyMap<string, CompiledProvider>, signal: AbortSignal): Promise<boolean> {
    const provider = providers.get(record.providerId);
    if (!record.vendorFileId || !provider?.operations[FILE_OPERATIONS.delete]) return record.vendorFileId === null;
    try {
      await this.vendorJson(provider, FILE_OPERATIONS.delete, null, signal, { file_id: record.vendorFileId });
      return true;
    } catch (error) {
      // Already gone at the vendor counts as released.
      return error instanceof VendorRefused && error.status === 404;
    }
  }

  /** Calls a vendor file operation and parses its JSON; a vendor refusal becomes VendorRefused. */
  async vendorJson(provider: CompiledProvider, operation: string, body: unknown, signal: AbortSignal, pathParams?: Record<string, string>): Promise<unknown> {
    const res = await this.deps.upstream.send(provider, operation, body, signal, { pathParams });
    const text = await res.body.text();
    if (res.status >= 400) throw new VendorRefused(res.status, text);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new GatewayError('upstream_error', 'The file store answered with something that is not JSON.');
    }
  }
}

/** The vendor answered with an error status: a definite outcome (nothing stored). */
export class VendorRefused extends Error {
  constructor(readonly status: number, readonly body: string) {
    super(`vendor answered ${status}`);
  }
  /** The client-facing error: the vendor's own 4xx message where it is safe, else a 502. */
  get clientError(): GatewayError {
    if (this.status === 429) return new GatewayError('upstream_rate_limited', 'The file store is rate limited; try again later.');
    if (this.status >= 500) return new GatewayError('upstream_error', 'The file store failed; nothing was stored.');
    let message = 'The file store refused the file.';
    try {
      const parsed = JSON.parse(this.body) as { error?: { message?: unknown } };
      if (typeof parsed.error?.message === 'string') message = `The file store refused the file: ${parsed.error.message}`;
    } catch { /* keep the generic message */ }
    return new GatewayError('invalid_request', message);
  }
}

function quotaError(refusal: { limit: 'files' | 'bytes'; files: number; bytes: number }, quota: { maxFiles: number; maxTotalBytes: number }): GatewayError {
  const message = refusal.limit === 'files'
    ? `The account already holds ${refusal.files} files, the most it may (${quota.maxFiles}); delete one or wait for one to expire.`
    : `The account's files would exceed ${quota.maxTotalBytes} bytes (${refusal.bytes} held); delete one or wait for one to expire.`;
  return new GatewayError('file_quota_exceeded', message);
}
