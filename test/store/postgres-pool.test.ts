import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.js';
import { adminUrl, describeStore, openTestDb, storeKind } from '../helpers/db.js';

// pg's pools close a connection after 10 s idle by default; the gateway keeps them (src/store/postgres.ts):
// reopening one costs a server process and its start-up, which requests used to wait for.
const describePostgres = storeKind === 'postgres' ? describeStore : describeStore.skip;

describePostgres('PostgreSQL pool', () => {
  let store: { db: Db; databaseUrl?: string; dispose(): Promise<void> };
  beforeAll(async () => { store = await openTestDb(); });
  afterAll(async () => { await store.dispose(); });

  async function connectionsTo(databaseUrl: string): Promise<number> {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    try {
      const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1', [new URL(databaseUrl).pathname.slice(1)]);
      return Number(rows[0]!.n);
    } finally {
      await client.end();
    }
  }

  it('keeps idle connections open past pg\'s default idle timeout of 10 s', async () => {
    // Four statements at once grow the pool to four connections.
    await Promise.all(Array.from({ length: 4 }, () => store.db.query('SELECT pg_sleep(0.2)')));
    const grown = await connectionsTo(store.databaseUrl!);
    expect(grown).toBeGreaterThanOrEqual(4);
    await new Promise((ok) => setTimeout(ok, 11_000));
    expect(await connectionsTo(store.databaseUrl!)).toBe(grown);
  }, 30_000);
});
