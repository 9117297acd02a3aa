/**
 * Migrations: `src/store/migrations/NNN_name.sql`, applied in file-name order, each in its own
 * transaction and recorded in `schema_migrations` with a SHA-256 checksum. Every transaction first takes
 * a transaction-scoped advisory lock, so two processes starting at once apply each file exactly once.
 * An applied file whose content changed stops the boot (write a new migration instead).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './types.js';

/** Advisory lock key held while a migration runs (the cron lock uses a different key). */
export const MIGRATION_LOCK_KEY = 7_242_431_001n;

/** One migration file. */
export interface Migration {
  version: string;
  name: string;
  sql: string;
  checksum: string;
}

/**
 * The migrations folder: walks up from this module (src/store or dist/src/store) to the folder holding
 * package.json, then `src/store/migrations`.
 */
export function migrationsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = join(dir, 'src', 'store', 'migrations');
    if (existsSync(join(dir, 'package.json')) && existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('cannot find src/store/migrations above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

/** Reads and orders the migration files; throws on a malformed name or a repeated version. */
export function loadMigrations(dir = migrationsDir()): Migration[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
  const seen = new Set<string>();
  return files.map((file) => {
    const match = /^(\d+)_([a-z0-9_]+)\.sql$/.exec(file);
    if (!match) throw new Error(`bad migration file name ${file} (want NNN_name.sql)`);
    const [, version, name] = match as unknown as [string, string, string];
    if (seen.has(version)) throw new Error(`migration version ${version} appears twice`);
    seen.add(version);
    const sql = readFileSync(join(dir, file), 'utf8');
    const checksum = createHash('sha256').update(sql).digest('hex');
    return { version, name, sql, checksum };
  });
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version text PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now())`;

/** Applies pending migrations in order; returns the versions applied by this call. */
export async function migrate(db: Db, migrations = loadMigrations()): Promise<string[]> {
  const applied: string[] = [];
  for (const m of migrations) {
    const didApply = await db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM pg_advisory_xact_lock($1::bigint)', [MIGRATION_LOCK_KEY]);
      await tx.query(CREATE_TABLE);
      const rows = await tx.query<{ checksum: string }>(
        'SELECT checksum FROM schema_migrations WHERE version = $1',
        [m.version],
      );
      const done = rows[0];
      if (done) {
        if (done.checksum !== m.checksum) {
          throw new Error(`migration ${m.version}_${m.name} changed after it was applied (checksum mismatch)`);
        }
        return false;
      }
      await tx.exec(m.sql);
      await tx.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
        m.version,
        m.name,
        m.checksum,
      ]);
      return true;
    });
    if (didApply) applied.push(m.version);
  }
  return applied;
}
