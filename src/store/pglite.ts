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

/**
 * Opens PGlite at a data folder (created if missing), or in memory for ':memory:'. No migrations.
 * A folder is locked for this process until close(): StoreLockedError if another live process holds it.
 */
export async function openPglite(dataDir: string): Promise<Db> {
  let pg: PGlite;
  let lock: DataDirLock | null = null;
  if (dataDir === ':memory:') {
    pg = await PGlite.create({ parsers });
  } else {
    mkdirSync(dataDir, { recursive: true });
    // Before PGlite reads the folder: a second process must not even load it (issue 8).
    lock = await acquireDataDirLock(dataDir);
    try {
      pg = await PGlite.create({ dataDir, parsers });
    } catch (err) {
      lock.release();
      throw err;
    }
  }
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
