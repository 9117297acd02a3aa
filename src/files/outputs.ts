/**
 * Generated outputs held in temporary private storage (spec 4.14 flex images, 4.16 video; spec 8
 * "Generated output lifetime 24 hours"): the gateway downloads what a vendor produced, keeps it in the
 * blob store under a temporary-file record (state finalized, purpose IMAGE_OUTPUT or VIDEO_OUTPUT, so
 * the hourly cleanup deletes it at expiry like any temporary file), and hands the client a signed
 * read URL valid until then. An output purpose is no input purpose: a client cannot pass its id back
 * as a `file_id` (the consumer's purpose check refuses it).
 */
import { Readable } from 'node:stream';
import type { Clock } from '../clock.js';
import type { FilesSettings } from '../config/types.js';
import { randomId } from '../ledger/ids.js';
import type { Db } from '../store/types.js';
import type { BlobStore } from './blob/types.js';
import { signUrl } from './signing.js';
import { BLOB_PATH } from './temp-files.js';
import { insertFinalized, markDeleted, type TempFileRecord } from './temp-records.js';

/** The purposes of generated outputs (never accepted as inputs). */
export type OutputPurpose = 'IMAGE_OUTPUT' | 'VIDEO_OUTPUT';

/** A stored output, as a client answer names it. */
export interface StoredOutput { id: string; url: string; expiresAt: Date; contentType: string; byteSize: number }

/** What the output store needs. */
export interface OutputsDeps { db: Db; blobs: BlobStore; clock: Clock; settings: () => FilesSettings; secret: Buffer }

/** Keeps generated outputs and signs their read URLs. */
export class Outputs {
  constructor(private readonly deps: OutputsDeps) {}

  /**
   * Stores `data` for the account until the output lifetime ends. The record is written before the
   * blob, so the orphan sweep never takes a blob whose record is on its way; a failed write removes it.
   */
  async store(input: { accountId: string; purpose: OutputPurpose; contentType: string; data: Buffer; origin: string }): Promise<StoredOutput> {
    const { db, blobs, clock, settings } = this.deps;
    const now = clock.now();
    const id = randomId('tfile_');
    const record: TempFileRecord = {
      id, accountId: input.accountId, purpose: input.purpose, contentType: input.contentType,
      declaredBytes: input.data.length, blobKey: `temp/${input.accountId}/${id}`, state: 'finalized',
      actualBytes: input.data.length, detectedType: input.contentType,
      createdAt: now, uploadExpiresAt: now, expiresAt: new Date(now.getTime() + settings().outputTtlMs),
    };
    await insertFinalized(db, record);
    try {
      await blobs.write(record.blobKey, Readable.from([input.data]), { maxBytes: input.data.length, contentType: input.contentType, exclusive: true });
    } catch (error) {
      await markDeleted(db, id, clock.now(), 'write_failed').catch(() => undefined);
      throw error;
    }
    return this.describe(record, input.origin);
  }

  /** The client's view of a stored output: its read URL is valid for as long as the output lives. */
  async describe(record: TempFileRecord, origin: string): Promise<StoredOutput> {
    const url = (await this.deps.blobs.readUrl(record.blobKey, record.expiresAt))
      ?? signUrl(`${origin}${BLOB_PATH}${record.id}`, { method: 'GET', fileId: record.id, expiresAt: record.expiresAt }, this.deps.secret);
    return { id: record.id, url, expiresAt: record.expiresAt, contentType: record.contentType, byteSize: record.actualBytes ?? record.declaredBytes };
  }
}
