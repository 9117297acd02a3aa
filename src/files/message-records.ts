/**
 * Messages-format file records (migration 007, spec 3 "Messages-format file", 8). A row is the
 * account's reservation against its quota from the moment an upload starts. The quota check and the
 * insert run in one transaction under a per-account advisory lock, so concurrent uploads cannot
 * together pass the 20-file or 100 MiB limit.
 */
import { advisoryLockKey } from '../store/advisory.js';
import type { Db, Queryable } from '../store/types.js';

/** One messages-format file. */
export interface MessageFileRecord {
  id: string;
  accountId: string;
  state: 'uploading' | 'active' | 'uncertain' | 'deleted';
  origin: 'upload' | 'generated';
  providerId: string;
  vendorFileId: string | null;
  filename: string;
  mimeType: string;
  sizeBytes: number;
  downloadable: boolean;
  blobKey: string | null;
  containerId: string | null;
  createdAt: Date;
  expiresAt: Date;
}

interface Row {
  id: string; account_id: string; state: MessageFileRecord['state']; origin: MessageFileRecord['origin']; provider_id: string;
  vendor_file_id: string | null; filename: string; mime_type: string; size_bytes: string | number; downloadable: boolean;
  blob_key: string | null; container_id: string | null; created_at: Date | string; expires_at: Date | string;
}

const COLUMNS = 'id, account_id, state, origin, provider_id, vendor_file_id, filename, mime_type, size_bytes, downloadable, blob_key, container_id, created_at, expires_at';

function toRecord(r: Row): MessageFileRecord {
  return {
    id: r.id, accountId: r.account_id, state: r.state, origin: r.origin, providerId: r.provider_id, vendorFileId: r.vendor_file_id,
    filename: r.filename, mimeType: r.mime_type, sizeBytes: Number(r.size_bytes), downloadable: r.downloadable, blobKey: r.blob_key,
    containerId: r.container_id, createdAt: new Date(r.created_at), expiresAt: new Date(r.expires_at),
  };
}

/** Per-account quotas (spec 8). */
export interface FileQuota { maxFiles: number; maxTotalBytes: number }

/** Why a reservation was refused, with what the account already holds. */
export interface QuotaRefusal { limit: 'files' | 'bytes'; files: number; bytes: number }


/** Inserts `record` if the account's live files (not deleted, not expired at `now`) leave room for it. */
export async function reserveMessageFile(db: Db, record: MessageFileRecord, quota: FileQuota, now: Date): Promise<QuotaRefusal | null> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock($1)', [advisoryLockKey(`message-files:${record.accountId}`)]);
    const [used] = await tx.query<{ files: number; bytes: string | number }>(
      `SELECT count(*)::int AS files, coalesce(sum(size_bytes), 0)::bigint AS bytes FROM message_files
       WHERE account_id = $1 AND state <> 'deleted' AND expires_at > $2`, [record.accountId, now]);
    const files = used?.files ?? 0;
    const bytes = Number(used?.bytes ?? 0);
    if (files + 1 > quota.maxFiles) return { limit: 'files', files, bytes };
    if (bytes + record.sizeBytes > quota.maxTotalBytes) return { limit: 'bytes', files, bytes };
    await insertRow(tx, record);
    return null;
  });
}

async function insertRow(q: Queryable, r: MessageFileRecord): Promise<void> {
  await q.query(
    `INSERT INTO message_files (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
    [r.id, r.accountId, r.state, r.origin, r.providerId, r.vendorFileId, r.filename, r.mimeType, r.sizeBytes, r.downloadable, r.blobKey, r.containerId, r.createdAt, r.expiresAt]);
}

/** uploading -> active, with what the vendor stored. */
export async function markUploaded(db: Queryable, id: string, vendorFileId: string, sizeBytes: number, mimeType: string): Promise<void> {
  await db.query(`UPDATE message_files SET state = 'active', vendor_file_id = $2, size_bytes = $3, mime_type = $4 WHERE id = $1 AND state = 'uploading'`,
    [id, vendorFileId, sizeBytes, mimeType]);
}

/** uploading -> uncertain: the vendor's answer was lost; the reservation stays until expiry (spec 3). */
export async function markUncertain(db: Queryable, id: string): Promise<void> {
  await db.query(`UPDATE message_files SET state = 'uncertain' WHERE id = $1 AND state = 'uploading'`, [id]);
}

/** Any live state -> deleted; false when it already was. `vendorReleased`: the vendor copy is gone too. */
export async function markMessageFileDeleted(db: Queryable, id: string, at: Date, vendorReleased: boolean): Promise<boolean> {
  const rows = await db.query(
    `UPDATE message_files SET state = 'deleted', deleted_at = $2::timestamptz, vendor_released_at = CASE WHEN $3::boolean THEN $2::timestamptz ELSE NULL END
     WHERE id = $1 AND state <> 'deleted' RETURNING id`, [id, at, vendorReleased]);
  return rows.length === 1;
}

/** Records that the vendor's copy was released (after a delete whose vendor call failed). */
export async function markVendorReleased(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query('UPDATE message_files SET vendor_released_at = $2 WHERE id = $1', [id, at]);
}

/** The shape of a messages-format file id; anything else is no file (and never reaches SQL). */
export const MESSAGE_FILE_ID = /^file_gw_[0-9a-f]{24}$/;

/** The record of `id`, or null. */
export async function findMessageFile(db: Queryable, id: string): Promise<MessageFileRecord | null> {
  if (!MESSAGE_FILE_ID.test(id)) return null;
  const [row] = await db.query<Row>(`SELECT ${COLUMNS} FROM message_files WHERE id = $1`, [id]);
  return row ? toRecord(row) : null;
}

/** The account's usable files (active, unexpired), newest first, after the cursor `(createdAt, id)`. */
export async function listMessageFiles(db: Queryable, accountId: string, now: Date, limit: number, after: { createdAt: Date; id: string } | null): Promise<MessageFileRecord[]> {
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS} FROM message_files WHERE account_id = $1 AND state = 'active' AND expires_at > $2
       AND ($3::timestamptz IS NULL OR (created_at, id) < ($3::timestamptz, $4::text))
     ORDER BY created_at DESC, id DESC LIMIT $5`,
    [accountId, now, after?.createdAt ?? null, after?.id ?? '', limit]);
  return rows.map(toRecord);
}

/** Live files past their lifetime at `now` (expiry), and deleted ones whose vendor copy is still to release. */
export async function messageFilesToRelease(db: Queryable, now: Date, limit: number): Promise<MessageFileRecord[]> {
  const rows = await db.query<Row>(
    `SELECT ${COLUMNS} FROM message_files
     WHERE (state <> 'deleted' AND expires_at <= $1) OR (state = 'deleted' AND vendor_released_at IS NULL AND vendor_file_id IS NOT NULL)
     ORDER BY expires_at LIMIT $2`, [now, limit]);
  return rows.map(toRecord);
}
