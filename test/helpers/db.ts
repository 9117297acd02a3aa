/**
 * Test stores. GATEWAY_TEST_STORE=pglite (default) gives an in-memory PGlite per call;
 * GATEWAY_TEST_STORE=postgres gives a brand-new database on the server (dropped in dispose()).
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import pg from 'pg';
import { describe, inject } from 'vitest';
import { openDb, type Db } from '../../src/store/db.js';

/** Which store this vitest project runs on. */
export const storeKind: 'pglite' | 'postgres' =
  process.env.GATEWAY_TEST_STORE === 'postgres' ? 'postgres' : 'pglite';

/** Fills in the OS user when neither the URL nor PGUSER/USER name one (libpq does the same). */
function withUser(raw: string): string {
  const url = new URL(raw);
  if (!url.username && !process.env.PGUSER && !process.env.USER) url.username = userInfo().username;
  return url.toString();
}

/** Admin connection used to create and drop test databases. */
export const adminUrl = withUser(process.env.TEST_DATABASE_ADMIN_URL ?? 'postgres://127.0.0.1:5432/postgres');

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

let template: Promise<Blob | undefined> | undefined;

/**
 * The migrated data directory every in-memory test store starts from (test/helpers/global-setup.ts),
 * read once per test file; undefined when the run has no global setup (a fresh initdb then).
 */
export function memoryTemplate(): Promise<Blob | undefined> {
  const file = inject('memoryStoreTemplate');
  template ??= file ? readFile(file).then((bytes) => new Blob([bytes])) : Promise.resolve(undefined);
  return template;
}

/** PGlite in memory, or a brand-new PostgreSQL database dropped in dispose(). Migrations are applied. */
export async function openTestDb(): Promise<{ db: Db; databaseUrl?: string; dispose(): Promise<void> }> {
  if (storeKind === 'pglite') {
    const db = await openDb({ dataDir: ':memory:', memoryTemplate: await memoryTemplate() });
    return { db, dispose: () => db.close() };
  }
  const name = `gw_t_${randomBytes(6).toString('hex')}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  const drop = () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  let db: Db;
  try {
    db = await openDb({ databaseUrl });
  } catch (err) {
    await drop();
    throw err;
  }
  return {
    db,
    databaseUrl,
    async dispose() {
      await db.close();
      await drop();
    },
  };
}

async function probe(): Promise<string | null> {
  try {
    await adminQuery('SELECT 1');
    return null;
  } catch (err) {
    return `${adminUrl.replace(/\/\/[^@/]*@/, '//***@')} unreachable (${(err as Error).message})`;
  }
}

const unreachable = storeKind === 'postgres' ? await probe() : null;
if (unreachable && process.env.CI) {
  throw new Error(`PostgreSQL suite cannot run under CI: ${unreachable}`);
}
if (unreachable) console.warn(`\n*** PostgreSQL suite skipped: ${unreachable} ***\n`);

/** describe; on postgres with no server: describe.skip with a loud warning (under CI: the file fails). */
export const describeStore: typeof describe = unreachable ? (describe.skip as typeof describe) : describe;
