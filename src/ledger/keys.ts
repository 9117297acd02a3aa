/**
 * API keys. A key is shown once at creation; the store keeps only its SHA-256 digest, so a leaked
 * database does not leak usable keys. Authentication looks the digest up (unique index).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Queryable, Db } from '../store/db.js';
import { randomId } from './ids.js';
import { LedgerError } from './types.js';
import type { Limits } from '../limits/types.js';
import { CONTROL_COLUMNS, controlsOf, storeControls, type KeyControls } from './key-controls.js';

/** A live key as authentication finds it: its account, the limit overrides, and its controls (migration 016). */
export interface AuthenticatedKey {
  accountId: string;
  keyId: string;
  accountLimits: Limits | null;
  keyLimits: Limits | null;
  controls: KeyControls;
}

const KEY_PREFIX = 'gw-';

/** 'gw-' + base64url of 32 random bytes (crypto.randomBytes). */
export function generateKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** hex SHA-256 of the whole key string. */
export function digestKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** What the key page shows of a key: `gw-` and its first 4 random characters. */
export function keyPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 4);
}

/** Inserts a new key for an existing account; returns null when the account does not exist. */
async function insertKey(q: Queryable, accountId: string, name: string | null): Promise<{ id: string; key: string } | null> {
  const id = randomId('key_');
  const key = generateKey();
  const rows = await q.query(
    'INSERT INTO api_keys (id, account_id, digest, name, prefix) SELECT $1, a.id, $3, $4, $5 FROM accounts a WHERE a.id = $2 RETURNING id',
    [id, accountId, digestKey(key), name, keyPrefix(key)],
  );
  return rows.length ? { id, key } : null;
}

/**
 * Creates a key (with an optional name, and controls) for an account; LedgerError not_found if the
 * account does not exist.
 */
export async function createKey(db: Db, accountId: string, name: string | null = null, controls?: KeyControls): Promise<{ id: string; key: string }> {
  if (!controls) {
    const created = await insertKey(db, accountId, name);
    if (!created) throw new LedgerError('not_found', `account ${accountId} not found`);
    return created;
  }
  return db.transaction(async (tx) => {
    const created = await insertKey(tx, accountId, name);
    if (!created) throw new LedgerError('not_found', `account ${accountId} not found`);
    await storeControls(tx, created.id, controls);
    return created;
  });
}

/**
 * Revokes a live key and issues a new one (new id, same name) for the same account, in one
 * transaction; with `accountId`, only a key of that account (another's is not_found, spec 5.9 style).
 * The new key keeps the old one's controls (its budget window starts afresh: the window is the key id's).
 */
export async function rotateKey(db: Db, keyId: string, accountId?: string): Promise<{ id: string; key: string }> {
  return db.transaction(async (tx) => {
    const rows = await tx.query<{ account_id: string; name: string | null } & Parameters<typeof controlsOf>[0]>(
      `UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL AND ($2::text IS NULL OR account_id = $2) RETURNING account_id, name, ${CONTROL_COLUMNS}`,
      [keyId, accountId ?? null],
    );
    const row = rows[0];
    if (!row) throw new LedgerError('not_found', `key ${keyId} not found or already revoked`);
    const created = await insertKey(tx, row.account_id, row.name);
    if (!created) throw new LedgerError('not_found', `account ${row.account_id} not found`);
    await storeControls(tx, created.id, controlsOf(row));
    return created;
  });
}

/** Revokes a key (idempotent for an already revoked key); not_found if unknown or, with `accountId`, another account's. */
export async function deleteKey(db: Db, keyId: string, accountId?: string): Promise<void> {
  const rows = await db.query(
    'UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 AND ($2::text IS NULL OR account_id = $2) RETURNING id',
    [keyId, accountId ?? null],
  );
  if (!rows.length) throw new LedgerError('not_found', `key ${keyId} not found`);
}

/**
 * Finds the live key with this digest; null for unknown, malformed or revoked keys. An expired key is
 * found (with its expires_at): the caller decides with its clock (the auth stage answers 401).
 */
export async function authenticate(db: Db, key: string): Promise<AuthenticatedKey | null> {
  if (!key.startsWith(KEY_PREFIX) || key.length > 200) return null;
  const rows = await db.query<{ id: string; account_id: string; key_limits: Limits | null; account_limits: Limits | null } & Parameters<typeof controlsOf>[0]>(
    `SELECT k.id, k.account_id, k.limits AS key_limits, a.limits AS account_limits, k.budget_nano, k.budget_period, k.allowed_models, k.expires_at
     FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.digest = $1 AND k.revoked_at IS NULL`,
    [digestKey(key)],
  );
  const row = rows[0];
  return row ? { accountId: row.account_id, keyId: row.id, accountLimits: row.account_limits, keyLimits: row.key_limits, controls: controlsOf(row) } : null;
}

/** Sets (or with null clears) the limits override of an account or a key; not_found if unknown. */
export async function setLimits(db: Db, table: 'accounts' | 'api_keys', id: string, limits: Limits | null): Promise<void> {
  const rows = await db.query(`UPDATE ${table} SET limits = $2::jsonb WHERE id = $1 RETURNING id`, [id, limits === null ? null : JSON.stringify(limits)]);
  if (rows.length === 0) throw new LedgerError('not_found', `${table === 'accounts' ? 'account' : 'key'} ${id} not found`);
}
