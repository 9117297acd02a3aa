/**
 * The hourly files cleanup (spec 3 "Temporary file", 8; issue 10 item 2): temporary files past their
 * pending or finalized lifetime lose their blob first, then their record is marked deleted, so a
 * crash between the two leaves a record the next run finishes, never a blob nobody knows. Then blobs
 * with no live record (an upload cut by a kill -9 before its record existed, or a record deleted by a
 * crash between the steps) are removed, and so are partial uploads the store left behind. Runs on
 * one replica at a time (src/jobs/exclusive.ts).
 */
import type { Clock } from '../clock.js';
import type { Db } from '../store/types.js';
import type { BlobStore } from './blob/types.js';
import { expiredTempFiles, liveTempFileIds, markDeleted } from './temp-records.js';

/** What one run did. */
export interface CleanupReport {
  pending_deleted: number;
  finalized_deleted: number;
  orphan_blobs_removed: number;
  partial_uploads_removed: number;
}

const BATCH = 500;

/** Runs the temporary-file part of the cleanup once; `graceMs`: how old a partial upload must be to be removed. */
export async function cleanupTempFiles(db: Db, blobs: BlobStore, clock: Clock, graceMs: number): Promise<CleanupReport> {
  const report: CleanupReport = { pending_deleted: 0, finalized_deleted: 0, orphan_blobs_removed: 0, partial_uploads_removed: 0 };
  const now = clock.now();
  for (;;) {
    const expired = await expiredTempFiles(db, now, BATCH);
    for (const file of expired) {
      await blobs.delete(file.blobKey);
      if (await markDeleted(db, file.id, now, 'expired', file.state === 'deleted' ? undefined : file.state)) {
        if (file.state === 'pending') report.pending_deleted += 1;
        else report.finalized_deleted += 1;
      }
    }
    if (expired.length < BATCH) break;
  }
  report.orphan_blobs_removed = await removeOrphans(db, blobs);
  report.partial_uploads_removed = await blobs.sweepPartial(new Date(now.getTime() - graceMs));
  return report;
}

/** Blobs under temp/ whose id has no live record. */
async function removeOrphans(db: Db, blobs: BlobStore): Promise<number> {
  const keys = await blobs.list('temp/');
  let removed = 0;
  for (let i = 0; i < keys.length; i += BATCH) {
    const slice = keys.slice(i, i + BATCH);
    const live = await liveTempFileIds(db, slice.map(idOfKey));
    for (const key of slice) {
      if (live.has(idOfKey(key))) continue;
      await blobs.delete(key);
      removed += 1;
    }
  }
  return removed;
}

/** `temp/<account>/<file id>` -> the file id. */
function idOfKey(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}
