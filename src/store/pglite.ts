/** The embedded driver: PGlite (PostgreSQL in WASM). PGlite runs one query at a time itself. */
import { mkdirSync } from 'node:fs';
import { PGlite, types, type Transaction } from '@electric-sql/pglite';
import type { Db, Tx } from './db.js';

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

/** Opens PGlite at a data folder (created if missing), or in memory for ':memory:'. No migrations. */
export async function openPglite(dataDir: string): Promise<Db> {
  let pg: PGlite;
  if (dataDir === ':memory:') {
    pg = await PGlite.create({ parsers });
  } else {
    mkdirSync(dataDir, { recursive: true });
    pg = await PGlite.create({ dataDir, parsers });
  }
  return {
    kind: 'pglite',
    async query<T>(sql: string, params?: unknown[]) {
      return (await pg.query<T>(sql, params)).rows;
    },
    async exec(sql: string) {
      await pg.exec(sql);
    },
    transaction<T>(fn: (tx: Tx) => Promise<T>) {
      return pg.transaction((tx) => fn(wrapTx(tx)));
    },
    async close() {
      if (!pg.closed) await pg.close();
    },
  };
}
