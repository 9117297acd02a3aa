/**
 * Temporary files (spec 2, 3, 4.7; issue 10 item 2): authorize -> upload -> finalize, then consumers
 * resolve a finalized `file_id` by purpose. Bytes go to the blob store; the record (temp-records.ts)
 * carries the state. Every lifetime comes from `files:` of gateway.config.yaml and the injected clock.
 */
import type { Readable } from 'node:stream';
import type { Clock } from '../clock.js';
import type { FilesSettings } from '../config/types.js';
import { GatewayError } from '../errors.js';
import { randomId } from '../ledger/ids.js';
import type { Db } from '../store/types.js';
import { BlobExistsError, BlobTooLargeError, type BlobStore, type ByteRange, type UploadTarget } from './blob/types.js';
import { parseRange } from './byte-range.js';
import { readAll } from './bytes.js';
import { signUrl, verifySignedUrl } from './signing.js';
import { findTempFile, insertPending, markDeleted, markFinalized, type TempFileRecord } from './temp-records.js';
import { verifyContent } from './verify/index.js';

/** What POST /v1/gateway/files/upload-authorizations answers (spec 2 "Temporary file"). */
export interface UploadAuthorization extends Omit<UploadTarget, 'url'> {
  file_id: string;
  upload_url: string;
  upload_expires_at: string;
}

/** What the service needs. */
export interface TempFilesDeps {
  db: Db;
  blobs: BlobStore;
  /** The current `files:` settings (hot reload may change them). */
  settings: () => FilesSettings;
  clock: Clock;
  /** Signs the local store's upload and read URLs. */
  secret: Buffer;
}

/** What a signed read serves: the body (null for an unsatisfiable range) and the range it covers (null: the whole file). */
export interface ServedRead { record: TempFileRecord; size: number; body: Readable | null; range: ByteRange | null }

/** Where the gateway serves the local store's signed URLs, under the caller's origin. */
export const UPLOAD_PATH = '/v1/gateway/files/uploads/';
export const BLOB_PATH = '/v1/gateway/files/blobs/';

/** The MIME type without parameters, lower-cased (`Image/PNG; x=y` -> `image/png`). */
export function baseMimeType(value: string): string {
  return value.split(';')[0]!.trim().toLowerCase();
}

const notFound = (id: string): GatewayError => new GatewayError('file_not_found', `No file "${id}" exists for this account.`);

/** The temporary-file service. */
export class TempFiles {
  constructor(private readonly deps: TempFilesDeps) {}

  /** Validates purpose, content type and declared size, records a pending file and signs its upload URL. */
  async authorize(accountId: string, input: { purpose: string; content_type: string; byte_size: number }, origin: string): Promise<UploadAuthorization> {
    const { settings, clock } = this.deps;
    const rule = settings().purposes.get(input.purpose);
    if (!rule) throw new GatewayError('invalid_request', `Unknown purpose "${input.purpose}".`, { param: 'purpose' });
    const contentType = baseMimeType(input.content_type);
    if (!rule.contentTypes.has(contentType)) {
      throw new GatewayError('invalid_request', `Purpose ${input.purpose} takes ${[...rule.contentTypes].join(', ')}; not "${contentType}".`, { param: 'content_type' });
    }
    if (input.byte_size > rule.maxBytes) {
      throw new GatewayError('upload_too_large', `Purpose ${input.purpose} takes files up to ${rule.maxBytes} bytes; ${input.byte_size} declared.`, { param: 'byte_size' });
    }
    const now = clock.now();
    const id = randomId('tfile_');
    const record = {
      id, accountId, purpose: input.purpose, contentType, declaredBytes: input.byte_size, blobKey: `temp/${accountId}/${id}`,
      createdAt: now, uploadExpiresAt: new Date(now.getTime() + settings().uploadUrlTtlMs), expiresAt: new Date(now.getTime() + settings().pendingTtlMs),
    };
    await insertPending(this.deps.db, record);
    const { url, method, headers } = await this.uploadTarget(record, origin);
    return { file_id: id, upload_url: url, method, headers, upload_expires_at: record.uploadExpiresAt.toISOString() };
  }

  private async uploadTarget(r: Omit<TempFileRecord, 'state' | 'actualBytes' | 'detectedType'>, origin: string): Promise<UploadTarget> {
    const grant = { key: r.blobKey, contentType: r.contentType, byteSize: r.declaredBytes, expiresAt: r.uploadExpiresAt };
    const signed = await this.deps.blobs.uploadTarget(grant);
    if (signed) return signed;
    const url = signUrl(`${origin}${UPLOAD_PATH}${r.id}`, { method: 'PUT', fileId: r.id, expiresAt: r.uploadExpiresAt, contentType: r.contentType, byteSize: r.declaredBytes }, this.deps.secret);
    return { url, method: 'PUT', headers: { 'content-type': r.contentType } };
  }

  /** The local store's upload: a signed, one-object, write-only PUT, counted and capped at the declared size. */
  async receiveUpload(fileId: string, query: Record<string, unknown>, contentType: string | undefined, body: Readable, contentLength = Number.NaN): Promise<void> {
    const record = await findTempFile(this.deps.db, fileId);
    const grant = { method: 'PUT' as const, fileId, contentType: record?.contentType, byteSize: record?.declaredBytes };
    const check = record ? verifySignedUrl(query, grant, this.deps.secret, this.deps.clock.now()) : 'invalid';
    if (check !== 'ok' || !record) throw urlRefused(check === 'expired');
    if (record.state !== 'pending') throw new GatewayError('invalid_request', 'This upload URL was already used.', { status: 409 });
    if (baseMimeType(contentType ?? '') !== record.contentType) {
      throw new GatewayError('invalid_request', `Send the header Content-Type: ${record.contentType}, as the authorization returned.`, { status: 400 });
    }
    if (contentLength > record.declaredBytes) throw new GatewayError('upload_too_large', `The upload is larger than the ${record.declaredBytes} bytes declared.`);
    try {
      await this.deps.blobs.write(record.blobKey, body, { maxBytes: record.declaredBytes, contentType: record.contentType, exclusive: true });
    } catch (error) {
      if (error instanceof BlobTooLargeError) throw new GatewayError('upload_too_large', `The upload is larger than the ${record.declaredBytes} bytes declared.`);
      if (error instanceof BlobExistsError) throw new GatewayError('invalid_request', 'This upload URL was already used.', { status: 409 });
      throw error;
    }
  }

  /** Verifies the real size and the sniffed type; finalized (idempotent), or rejected and removed. */
  async finalize(accountId: string, fileId: string): Promise<{ file_id: string; expires_at: string }> {
    const { db, blobs, clock } = this.deps;
    const record = await this.owned(accountId, fileId);
    if (record.state === 'finalized') return finalizedAnswer(record);
    if (clock.now() >= record.expiresAt) throw new GatewayError('file_expired', `The file "${fileId}" expired before it was finalized.`);
    const size = await blobs.size(record.blobKey);
    if (size === null) throw new GatewayError('invalid_request', `Nothing was uploaded for "${fileId}" yet: PUT the bytes to its upload_url first.`);
    const failure = size !== record.declaredBytes
      ? `${size} bytes were uploaded; ${record.declaredBytes} were declared.`
      : await this.contentFailure(record);
    if (failure) {
      await blobs.delete(record.blobKey);
      await markDeleted(db, record.id, clock.now(), 'verification_failed', 'pending');
      throw new GatewayError('file_verification_failed', `The upload was rejected and removed: ${failure}`);
    }
    const now = clock.now();
    const done = await markFinalized(db, record.id, { actualBytes: size, detectedType: record.contentType, at: now, expiresAt: new Date(now.getTime() + this.deps.settings().finalizedTtlMs) });
    if (done) return finalizedAnswer(done);
    // Another finalize won the race: answer what it recorded.
    const again = await findTempFile(db, record.id);
    if (again?.state === 'finalized') return finalizedAnswer(again);
    throw new GatewayError('file_verification_failed', `The upload of "${fileId}" was rejected and removed.`);
  }

  private async contentFailure(record: TempFileRecord): Promise<string | null> {
    const stream = await this.deps.blobs.read(record.blobKey);
    if (!stream) return 'the upload disappeared.';
    const verdict = await verifyContent(await readAll(stream, record.declaredBytes), record.contentType);
    return verdict.ok ? null : verdict.reason;
  }

  /** A finalized, unexpired file of this account and one of `purposes` (spec 2's consumer table). */
  async resolve(accountId: string, fileId: string, purposes: readonly string[]): Promise<TempFileRecord> {
    const record = await this.owned(accountId, fileId);
    if (record.state === 'pending') {
      throw new GatewayError('file_not_finalized', `The file "${fileId}" is not finalized: POST /v1/gateway/files/${fileId}/finalize after the upload.`, { param: 'file_id' });
    }
    if (this.deps.clock.now() >= record.expiresAt) throw new GatewayError('file_expired', `The file "${fileId}" has expired.`, { param: 'file_id' });
    if (!purposes.includes(record.purpose)) {
      throw new GatewayError('file_purpose_mismatch', `The file "${fileId}" was uploaded for ${record.purpose}; this endpoint takes ${purposes.join(' or ')}.`, { param: 'file_id' });
    }
    return record;
  }

  /** The bytes of a resolved file. */
  async bytes(record: TempFileRecord): Promise<Buffer> {
    const stream = await this.deps.blobs.read(record.blobKey);
    if (!stream) throw new GatewayError('file_expired', `The file "${record.id}" is no longer stored.`, { param: 'file_id' });
    return readAll(stream, record.actualBytes ?? record.declaredBytes);
  }

  /** A separate read-only service URL for a resolved file (spec 4.7 rule 5). */
  async readUrl(record: TempFileRecord, origin: string): Promise<string> {
    const expiresAt = new Date(this.deps.clock.now().getTime() + this.deps.settings().readUrlTtlMs);
    return (await this.deps.blobs.readUrl(record.blobKey, expiresAt))
      ?? signUrl(`${origin}${BLOB_PATH}${record.id}`, { method: 'GET', fileId: record.id, expiresAt }, this.deps.secret);
  }

  /**
   * The local store's read URL: the bytes of a finalized file while the signature holds, the whole
   * file or the one byte range `Range` asks for (hosted video plays by ranges, spec 4.16).
   */
  async serveRead(fileId: string, query: Record<string, unknown>, rangeHeader?: string): Promise<ServedRead> {
    const record = await findTempFile(this.deps.db, fileId);
    const check = record ? verifySignedUrl(query, { method: 'GET', fileId }, this.deps.secret, this.deps.clock.now()) : 'invalid';
    if (check !== 'ok' || !record) throw urlRefused(check === 'expired');
    if (record.state !== 'finalized') throw notFound(fileId);
    const size = record.actualBytes ?? record.declaredBytes;
    const asked = parseRange(rangeHeader, size);
    if (asked.kind === 'unsatisfiable') return { record, size, body: null, range: null };
    const range = asked.kind === 'partial' ? asked.range : null;
    const body = await this.deps.blobs.read(record.blobKey, range ?? undefined);
    if (!body) throw notFound(fileId);
    return { record, size, body, range };
  }

  /** The record when it exists and belongs to the account; another account's id is the same 404 (spec 4.7 rule 4). */
  private async owned(accountId: string, fileId: string): Promise<TempFileRecord> {
    const record = await findTempFile(this.deps.db, fileId);
    if (!record || record.accountId !== accountId) throw notFound(fileId);
    if (record.state === 'deleted') throw new GatewayError('file_expired', `The file "${fileId}" was deleted.`, { param: 'file_id' });
    return record;
  }
}

function finalizedAnswer(record: TempFileRecord): { file_id: string; expires_at: string } {
  return { file_id: record.id, expires_at: record.expiresAt.toISOString() };
}

function urlRefused(expired: boolean): GatewayError {
  return new GatewayError('invalid_request', expired ? 'This signed URL has expired.' : 'This signed URL is not valid for this request.', { status: 403 });
}
