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
  /** For ':memory:': a migrated data directory from {@link memoryStoreTemplate} to start from. */
  memoryTemplate?: Blob;
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
    db = await openPglite(opts.dataDir, { template: opts.memoryTemplate });
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

/**
 * A migrated in-memory store's data directory. Passed as `memoryTemplate`, it starts an in-memory
 * store without initdb; migrations then find nothing to do unless the template is older than the code.
 */
export async function memoryStoreTemplate(): Promise<Blob> {
  const { createPgliteTemplate } = await import('./pglite.js');
  return createPgliteTemplate(migrate);
}

/** The SQLSTATE of a database error from either driver ('23505' unique violation, ...), if any. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
