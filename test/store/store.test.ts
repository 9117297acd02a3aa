import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryStoreTemplate, openDb, sqlState, type Db } from '../../src/store/db.js';
import { loadMigrations, migrate, migrationsDir } from '../../src/store/migrate.js';
import { openPglite } from '../../src/store/pglite.js';
import { openPostgres } from '../../src/store/postgres.js';
import { describeStore, memoryTemplate, openTestDb, storeKind } from '../helpers/db.js';

describe('migration files', () => {
  it('are found under src/store/migrations from the project root', () => {
    const dir = migrationsDir();
    expect(dir.replace(/\\/g, '/')).toMatch(/\/src\/store\/migrations$/);
    expect(existsSync(join(dir, '..', '..', '..', 'package.json'))).toBe(true);
    const versions = loadMigrations().map((m) => `${m.version}_${m.name}`);
    expect(versions[0]).toBe('001_ledger');
    expect([...versions].sort()).toEqual(versions);
  });
});

describeStore(`store (${storeKind})`, () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  let db: Db;
  beforeAll(async () => {
    t = await openTestDb();
    db = t.db;
  });
  afterAll(() => t?.dispose());

  it('reports its kind and applied every migration once', async () => {
    expect(db.kind).toBe(storeKind);
    const rows = await db.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual(loadMigrations().map((m) => m.version));
    expect(await migrate(db)).toEqual([]);
  });

  it('returns int8 and numeric as exact strings, timestamptz as Date, jsonb parsed', async () => {
    const big = 9_223_372_036_854_775_807n;
    const [row] = await db.query<Record<string, unknown>>(
      `SELECT $1::bigint AS b, sum(x)::text AS s, count(*) AS c, now() AS t, '{"a":[1]}'::jsonb AS j
       FROM (VALUES ($1::bigint), ($1::bigint)) v(x)`,
      [big],
    );
    expect(row!.b).toBe(big.toString());
    expect(BigInt(row!.s as string)).toBe(big * 2n);
    expect(row!.c).toBe('2');
    expect(row!.t).toBeInstanceOf(Date);
    expect(row!.j).toEqual({ a: [1] });
  });

  it('rolls a transaction back when fn throws, and commits otherwise', async () => {
    await db.exec('CREATE TABLE tx_probe (v int)');
    await expect(
      db.transaction(async (tx) => {
        await tx.query('INSERT INTO tx_probe VALUES (1)');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await db.transaction((tx) => tx.query('INSERT INTO tx_probe VALUES (2)'));
    expect(await db.query('SELECT v FROM tx_probe')).toEqual([{ v: 2 }]);
    const err = await db.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $1, $1)', ['001']).catch((e: unknown) => e);
    expect(sqlState(err)).toBe('23505');
  });

  it('refuses an applied migration whose file changed', async () => {
    const changed = loadMigrations().map((m, i) => (i === 0 ? { ...m, checksum: 'edited' } : m));
    await expect(migrate(db, changed)).rejects.toThrow(/checksum mismatch/);
  });

  it('applies each migration exactly once when two migrators start at once', async () => {
    await db.exec('DROP SCHEMA public CASCADE; CREATE SCHEMA public;');
    let other: Db = db;
    if (storeKind === 'postgres') other = await openPostgres(t.databaseUrl!);
    try {
      const results = await Promise.all([migrate(db), migrate(other)]);
      const all = loadMigrations().map((m) => m.version);
      expect([...results[0], ...results[1]].sort()).toEqual(all);
      const rows = await db.query('SELECT version FROM schema_migrations');
      expect(rows).toHaveLength(all.length);
    } finally {
      if (other !== db) await other.close();
    }
  });
});

describe.skipIf(storeKind !== 'pglite')('PGlite data folder', () => {
  it('is created if missing and keeps data across reopen', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-pglite-'));
    try {
      const dataDir = join(dir, 'nested', 'data');
      const first = await openDb({ dataDir });
      await first.query("INSERT INTO accounts (id, opening_nano, balance_nano) VALUES ('acct_x', 5, 5)");
      await first.close();
      const second = await openDb({ dataDir });
      expect(await second.query('SELECT balance_nano FROM accounts')).toEqual([{ balance_nano: '5' }]);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('openDb needs a databaseUrl or a dataDir', async () => {
    await expect(openDb({})).rejects.toThrow(TypeError);
    const mem = await openPglite(':memory:');
    expect(await mem.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await mem.close();
  });
});

describe.runIf(storeKind === 'pglite')('in-memory store template', () => {
  it('starts migrated stores that share nothing with each other', async () => {
    const template = await memoryStoreTemplate();
    const first = await openDb({ dataDir: ':memory:', memoryTemplate: template });
    const second = await openDb({ dataDir: ':memory:', memoryTemplate: template });
    try {
      expect(await migrate(first)).toEqual([]); // the template carries every migration
      await first.query("INSERT INTO accounts (id, opening_nano, balance_nano) VALUES ('acct_t', 7, 7)");
      expect(await first.query('SELECT balance_nano FROM accounts')).toEqual([{ balance_nano: '7' }]);
      expect(await second.query('SELECT count(*)::int AS n FROM accounts')).toEqual([{ n: 0 }]);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("is made once per run by the suite's global setup", async () => {
    const template = await memoryTemplate();
    expect(template?.size).toBeGreaterThan(1_000_000);
  });
});
