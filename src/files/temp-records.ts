/**
 * The temporary-file records (migration 007, spec 3 "Temporary file"): every statement that reads or
 * moves one, each guarded by the state it expects, so two callers racing on one file (concurrent
 * finalizes, a finalize against the cleanup) move it once.
 */
import type { Queryable } from '../store/types.js';

/** One temporary file's record. */
export interface TempFileRecord {
  id: string;
  accountId: string;
  purpose: string;
  contentType: string;
  declaredBytes: number;
  blobKey: string;
  state: 'pending' | 'finalized' | 'deleted';
  actualBytes: number | null;
  detectedType: string | null;
  createdAt: Date;
  uploadExpiresAt: Date;
  expiresAt: Date;
}

interface Row {
  id: string; account_id: string; purpose: string; content_type: string; declared_bytes: string | number; blob_key: string;
  state: TempFileRecord['state']; actual_bytes: string | number | null; detected_type: string | null;
  created_at: Date | string; upload_expires_at: Date | string; expires_at: Date | string;
}

const COLUMNS = 'id, account_id, purpose, content_type, declared_bytes, blob_key, state, actual_bytes, detected_type, created_at, upload_expires_at, expires_at';

function toRecord(row: Row): TempFileRecord {
  return {
    id: row.id, accountId: row.account_id, purpose: row.purpose, contentType: row.content_type,
    declaredBytes: Number(row.declared_bytes), blobKey: row.blob_key, state: row.state,
    actualBytes: row.actual_bytes === null ? null : Number(row.actual_bytes), detectedType: row.detected_type,
    createdAt: new Date(row.created_at), uploadExpiresAt: new Date(row.upload_expires_at), expiresAt: new Date(row.expires_at),
  };
}

/** Inserts a new pending file. */
export async function insertPending(db: Queryable, r: Omit<TempFileRecord, 'state' | 'actualBytes' | 'detectedType'>): Promise<void> {
  await db.query(
    `INSERT INTO temp_files (id, account_id, purpose, content_type, declared_bytes, blob_key, state, created_at, upload_expires_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, $9)`,
    [r.id, r.accountId, r.purpose, r.contentType, r.declaredBytes, r.blobKey, r.createdAt, r.uploadExpiresAt, r.expiresAt]);
}

/** Inserts a file that is finalized from the start: a generated output the gateway stored itself (src/files/outputs.ts). */
export async function insertFinalized(db: Queryable, r: TempFileRecord): Promise<void> {
  await db.query(
    `INSERT INTO temp_files (id, account_id, purpose, content_type, declared_bytes, blob_key, state, actual_bytes, detected_type, created_at, upload_expires_at, finalized_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, 'finalized', $5, $4, $7, $7, $7, $8)`,
    [r.id, r.accountId, r.purpose, r.contentType, r.declaredBytes, r.blobKey, r.createdAt, r.expiresAt]);
}

/** The shape of a temporary file id; anything else is no file (and never reaches SQL: a NUL would be a 500). */
export const TEMP_FILE_ID = /^tfile_[0-9a-f]{24}$/;

/** The record of `id`, whatever its owner and state (callers check both), or null. */
export async function findTempFile(db: Queryable, id: string): Promise<TempFileRecord | null> {
  if (!TEMP_FILE_ID.test(id)) return null;
  const [row] = await db.query<Row>(`SELECT ${COLUMNS} FROM temp_files WHERE id = $1`, [id]);
  return row ? toRecord(row) : null;
}

/** pending -> finalized; null when another caller moved it first. */
export async function markFinalized(db: Queryable, id: string, v: { actualBytes: number; detectedType: string; at: Date; expiresAt: Date }): Promise<TempFileRecord | null> {
  const [row] = await db.query<Row>(
    `UPDATE temp_files SET state = 'finalized', actual_bytes = $2, detected_type = $3, finalized_at = $4, expires_at = $5
     WHERE id = $1 AND state = 'pending' RETURNING ${COLUMNS}`,
    [id, v.actualBytes, v.detectedType, v.at, v.expiresAt]);
  return row ? toRecord(row) : null;
}

/** Any live state -> deleted (only from `from` when given); false when it was not in such a state. */
export async function markDeleted(db: Queryable, id: string, at: Date, reason: string, from?: 'pending' | 'finalized'): Promise<boolean> {
  const rows = await db.query(
    `UPDATE temp_files SET state = 'deleted', deleted_at = $2, deleted_reason = $3
     WHERE id = $1 AND state ${from ? '= $4' : "<> 'deleted'"} RETURNING id`,
    from ? [id, at, reason, from] : [id, at, reason]);
  return rows.length === 1;
}

/** Live files whose lifetime ended at `now`, oldest first, at most `limit`. */
export async function expiredTempFiles(db: Queryable, now: Date, limit: number): Promise<TempFileRecord[]> {
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS} FROM temp_files WHERE state <> 'deleted' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`, [now, limit]);
  return rows.map(toRecord);
}

/** Which of `ids` have a live record (pending or finalized); for the orphan-blob sweep. */
export async function liveTempFileIds(db: Queryable, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.query<{ id: string }>(`SELECT id FROM temp_files WHERE id = ANY($1) AND state <> 'deleted'`, [ids]);
  return new Set(rows.map((r) => r.id));
}
