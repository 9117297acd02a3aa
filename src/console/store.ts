/**
 * The console's records (issue 13; migration 010): pending sign-ups, console users and sessions. A
 * sign-up becomes an account and a user only when its emailed token is used (once, before it expires),
 * in one transaction with the account's creation. Tokens and session ids are random; only their SHA-256
 * digests are stored, so a leaked database opens no session and verifies no sign-up.
 */
import { createHash, randomBytes } from 'node:crypto';
import { randomId } from '../ledger/ids.js';
import type { Db } from '../store/db.js';

/** hex SHA-256 of a token or session id. */
export function digest(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A fresh random secret: 32 bytes, base64url. */
export function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** A signed-in console user. */
export interface ConsoleUser { id: string; email: string; accountId: string }

/**
 * A live session: a user's, or the operator's (signed in with the admin token, whose digest it keeps:
 * `adminTokenDigest`, checked against the current token on every request).
 */
export interface ConsoleSession { user: ConsoleUser | null; operator: boolean; csrfToken: string; adminTokenDigest: string | null }

/** Records a pending sign-up; returns the token to email. */
export async function createSignup(db: Db, email: string, passwordHash: string, ttlMs: number, now: Date): Promise<string> {
  const token = newSecret();
  await db.query(
    'INSERT INTO console_signups (token_digest, email, password_hash, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)',
    [digest(token), email, passwordHash, now, new Date(now.getTime() + ttlMs)],
  );
  return token;
}

/** Whether a console user with this (lower-cased) email exists. */
export async function userExists(db: Db, email: string): Promise<boolean> {
  return (await db.query('SELECT 1 FROM console_users WHERE email = $1', [email])).length > 0;
}

/** Why a verification did not create an account. */
export type VerifyRefusal = 'unknown' | 'used' | 'expired' | 'taken';

/**
 * Uses a sign-up token: marks it used (once: a second use finds it used) and creates the account with
 * its opening balance and the console user, all in one transaction. The email may have been taken by an
 * earlier sign-up of the same address meanwhile: then nothing is created.
 */
export async function verifySignup(db: Db, token: string, openingNano: bigint, now: Date): Promise<ConsoleUser | VerifyRefusal> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<{ email: string; password_hash: string; expires_at: Date; used_at: Date | null }>(
      'SELECT email, password_hash, expires_at, used_at FROM console_signups WHERE token_digest = $1 FOR UPDATE', [digest(token)],
    );
    if (!row) return 'unknown';
    if (row.used_at) return 'used';
    if (new Date(row.expires_at).getTime() <= now.getTime()) return 'expired';
    await tx.query('UPDATE console_signups SET used_at = $2 WHERE token_digest = $1', [digest(token), now]);
    if ((await tx.query('SELECT 1 FROM console_users WHERE email = $1', [row.email])).length > 0) return 'taken';
    const accountId = randomId('acct_');
    await tx.query('INSERT INTO accounts (id, opening_nano, balance_nano) VALUES ($1, $2, $2)', [accountId, openingNano]);
    const id = randomId('user_');
    await tx.query('INSERT INTO console_users (id, email, password_hash, account_id, created_at) VALUES ($1, $2, $3, $4, $5)', [id, row.email, row.password_hash, accountId, now]);
    return { id, email: row.email, accountId };
  });
}

/** The user with this email and their stored password hash, or null. */
export async function findUser(db: Db, email: string): Promise<(ConsoleUser & { passwordHash: string }) | null> {
  const [row] = await db.query<{ id: string; email: string; account_id: string; password_hash: string }>(
    'SELECT id, email, account_id, password_hash FROM console_users WHERE email = $1', [email],
  );
  return row ? { id: row.id, email: row.email, accountId: row.account_id, passwordHash: row.password_hash } : null;
}

/** Opens a session (a user's, or the operator's with the admin token it signed in with); returns the id for the cookie (only its digest is stored). */
export async function openSession(db: Db, owner: { userId: string } | { operator: true; adminToken: string }, ttlMs: number, now: Date): Promise<string> {
  const id = newSecret();
  const operator = 'operator' in owner;
  await db.query(
    'INSERT INTO console_sessions (id_digest, user_id, operator, admin_token_digest, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [digest(id), operator ? null : owner.userId, operator, operator ? digest(owner.adminToken) : null, newSecret(), now, new Date(now.getTime() + ttlMs)],
  );
  return id;
}

/** The live session with this id, or null (unknown or expired). */
export async function findSession(db: Db, id: string, now: Date): Promise<ConsoleSession | null> {
  const [row] = await db.query<{ operator: boolean; csrf_token: string; admin_token_digest: string | null; user_id: string | null; email: string | null; account_id: string | null }>(
    `SELECT s.operator, s.csrf_token, s.admin_token_digest, u.id AS user_id, u.email, u.account_id
     FROM console_sessions s LEFT JOIN console_users u ON u.id = s.user_id
     WHERE s.id_digest = $1 AND s.expires_at > $2`,
    [digest(id), now],
  );
  if (!row) return null;
  const user = row.user_id && row.email && row.account_id ? { id: row.user_id, email: row.email, accountId: row.account_id } : null;
  return { user, operator: row.operator, csrfToken: row.csrf_token, adminTokenDigest: row.admin_token_digest };
}

/** Ends a session (sign-out). */
export async function closeSession(db: Db, id: string): Promise<void> {
  await db.query('DELETE FROM console_sessions WHERE id_digest = $1', [digest(id)]);
}

/** Deletes expired sessions and sign-ups (run by the hourly cleanup). */
export async function purgeExpired(db: Db, now: Date): Promise<number> {
  const sessions = await db.query('DELETE FROM console_sessions WHERE expires_at <= $1 RETURNING 1', [now]);
  const signups = await db.query('DELETE FROM console_signups WHERE expires_at <= $1 RETURNING 1', [now]);
  return sessions.length + signups.length;
}
