/** The server driver: node-postgres pool. int8/numeric arrive as strings (pg's default). */
import pg from 'pg';
import type { Db, Tx } from './db.js';

function handle(client: pg.PoolClient): Tx {
  return {
    async query<T>(sql: string, params?: unknown[]) {
      return (await client.query(sql, params)).rows as T[];
    },
    async exec(sql: string) {
      await client.query(sql);
    },
  };
}

/** Opens a pg.Pool on `databaseUrl` and checks it answers. No migrations. */
export async function openPostgres(databaseUrl: string, max = 10): Promise<Db> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max });
  let closed = false;
  // An idle client losing its connection must not crash the process; the next query reconnects.
  // After close(), pool.end() may resolve before the server has seen every disconnect: stay quiet.
  pool.on('error', (err) => {
    if (!closed) console.error(`postgres pool: idle client error: ${err.message}`);
  });
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await pool.end().catch(() => undefined);
    throw err;
  }
  return {
    kind: 'postgres',
    async query<T>(sql: string, params?: unknown[]) {
      return (await pool.query(sql, params)).rows as T[];
    },
    async exec(sql: string) {
      await pool.query(sql);
    },
    async transaction<T>(fn: (tx: Tx) => Promise<T>) {
      const client = await pool.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await fn(handle(client));
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {
          broken = true;
        });
        throw err;
      } finally {
        client.release(broken);
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
