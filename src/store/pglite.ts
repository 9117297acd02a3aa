/** The embedded driver: PGlite (PostgreSQL in WASM). PGlite runs one query at a time itself. */
import { mkdirSync } from 'node:fs';
import { PGlite, types, type Transaction } from '@electric-sql/pglite';
import type { Db, Statement, Tx } from './types.js';
import { acquireDataDirLock, type DataDirLock } from './lock.js';

/** Same row shapes as node-postgres: int8 and numeric as decimal strings. */
const parsers = {
  [types.INT8]: (value: string) => value,
  [types.NUMERIC]: (value: string) => value,
};

/** Options for {@link openPglite}. */
export interface PgliteOptions {
  /**
   * For ':memory:' only: a data directory made by {@link createPgliteTemplate} to start from instead of
   * running initdb (about 0.5 s instead of 2.5 s here; the test suite opens one store per gateway).
   */
  template?: Blob;
}

function wrapTx(tx: Transaction): Tx {
  return {
    async query<T>(sql: string, params?: unknown[]) {
      return (await tx.query<T>(sql, params)).rows;
    },
    async exec(sql: string) {
      await tx.exec(sql);
    },
  };
}

function wrapPglite(pg: PGlite, lock: DataDirLock | null): Db {
  return {
    kind: 'pglite',
    async query<T>(sql: string, params?: unknown[]) {
      return (await pg.query<T>(sql, params)).rows;
    },
    async exec(sql: string) {
      await pg.exec(sql);
    },
    // One process writes the embedded store: nothing to prepare per connection, nothing to flush early.
    async run<T>(statement: Statement, params: unknown[]) {
      return (await pg.query<T>(statement.text, params)).rows;
    },
    transaction<T>(fn: (tx: Tx) => Promise<T>) {
      return pg.transaction((tx) => fn(wrapTx(tx)));
    },
    async close() {
      try {
        if (!pg.closed) await pg.close();
      } finally {
        lock?.release(); // after PGlite wrote the folder back
      }
    },
  };
}

/**
 * Opens PGlite at a data folder (created if missing), or in memory for ':memory:'. No migrations.
 * A folder is locked for this process until close(): StoreLockedError if another live process holds it.
 */
export async function openPglite(dataDir: string, opts: PgliteOptions = {}): Promise<Db> {
  if (dataDir === ':memory:') {
    return wrapPglite(await PGlite.create({ parsers, ...(opts.template ? { loadDataDir: opts.template } : {}) }), null);
  }
  mkdirSync(dataDir, { recursive: true });
  // Before PGlite reads the folder: a second process must not even load it (issue 8).
  const lock = await acquireDataDirLock(dataDir);
  try {
    return wrapPglite(await PGlite.create({ dataDir, parsers }), lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

/**
 * A fresh in-memory store, `prepare`d (migrated), dumped as an uncompressed data directory: the
 * `template` of later in-memory stores.
 */
export async function createPgliteTemplate(prepare: (db: Db) => Promise<unknown>): Promise<Blob> {
  const pg = await PGlite.create({ parsers });
  try {
    await prepare(wrapPglite(pg, null));
    return await pg.dumpDataDir('none');
  } finally {
    await pg.close();
  }
}
