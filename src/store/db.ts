/**
 * The store: one SQL dialect (PostgreSQL) over two drivers. Embedded PGlite by default (a data folder,
 * or memory), a PostgreSQL server when a database URL is given. Both drivers return rows the same way:
 * `bigint` and `numeric` columns come back as decimal strings (convert money with `BigInt(...)`),
 * `timestamptz` as `Date`, `jsonb` parsed. Parameters use `$1` placeholders; a JS `bigint` parameter is
 * sent exactly.
 */
import type { Availability } from '../observability/availability.js';
import { migrate } from './migrate.js';
import type { Db } from './types.js';

export type { Db, Queryable, Statement, Tx } from './types.js';

/** Options for {@link openDb}. */
export interface OpenDbOptions {
  /** `postgres://...`: use a PostgreSQL server (pg.Pool). */
  databaseUrl?: string;
  /** PGlite data folder (created if missing), or ':memory:'. Used when `databaseUrl` is not set. */
  dataDir?: string;
  /** Told of every PostgreSQL outage and recovery (the embedded store cannot go away). */
  availability?: Availability;
}

/**
 * databaseUrl set -> PostgreSQL (pg.Pool); else PGlite at dataDir (a folder, created if missing) or in
 * memory when dataDir === ':memory:'. Runs migrations before returning.
 */
export async function openDb(opts: OpenDbOptions): Promise<Db> {
  let db: Db;
  if (opts.databaseUrl) {
    const { openPostgres } = await import('./postgres.js');
    db = await openPostgres(opts.databaseUrl, { availability: opts.availability });
  } else if (opts.dataDir) {
    const { openPglite } = await import('./pglite.js');
    db = await openPglite(opts.dataDir);
  } else {
    throw new TypeError("openDb needs databaseUrl or dataDir (use ':memory:' for a throwaway store)");
  }
  try {
    await migrate(db);
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
  return db;
}

/** The SQLSTATE of a database error from either driver ('23505' unique violation, ...), if any. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
