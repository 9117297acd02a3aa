/**
 * The server driver: node-postgres pool. int8/numeric arrive as strings (pg's default). A server that
 * cannot be reached surfaces as DependencyUnavailableError (a 503), reported once per outage through
 * `availability`; the pool reconnects by itself on the next call once the server is back.
 */
import pg from 'pg';
import { DependencyUnavailableError } from '../errors.js';
import type { Availability } from '../observability/availability.js';
import { isConnectionError } from './connection-errors.js';
import { listenPostgres } from './listen.js';
import type { Db, Statement, Tx } from './types.js';

/** How long a call may wait for a connection (a new one, or a free one from the pool). */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Idle connections are kept (pg's default closes them after 10 s). Opening one costs a new server
 * process, its start-up and a parse of every named statement: about 15 ms on the bench machine. With
 * the default, a lightly loaded gateway kept one or two, and every burst, and every background job
 * tick (two transactions at :00 and :30), opened the rest again while requests waited: 40 to 150 ms
 * stalls, the whole p99 at 100 req/s (bench/RESULTS.md). The pools still open connections on demand,
 * up to their size.
 */
const IDLE_TIMEOUT_NEVER = 0; // pg: an idleTimeoutMillis of 0 turns the timeout off

/**
 * Connections of each statement pool. Named statements (`run`, the ledger's) have two pools of their
 * own: `commit: 'async'` ones run with synchronous_commit off for the whole session, `durable` ones
 * with the server's setting (a setting made at connect, so a statement needs no SET of its own). The
 * ledger sends at most two batches of each commit mode at a time (src/ledger/group-commit.ts; settles
 * apart from reserves and releases, src/ledger/holds.ts).
 */
const STATEMENT_POOL_SIZE = 2;

/**
 * The statement pools' sessions never plan a sequential scan. A named statement is planned generically
 * after its first executions and the plan kept for the connection's life; planned while holds was a
 * few pages long, it would scan the whole table for ever after (migration 011 says the same of the
 * ledger's functions). Every named statement reaches its rows by primary key.
 */
const INDEX_PLANS = '-c enable_seqscan=off';

/** The session options of each statement pool, by the commit its statements declare (bench/lib/db.mjs uses them too). */
export const STATEMENT_SESSIONS: Readonly<Record<Statement['commit'], string>> = {
  durable: INDEX_PLANS,
  async: `${INDEX_PLANS} -c synchronous_commit=off`,
};

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

/** Runs one store call: success marks the store up; a connection failure marks it down and becomes a 503. */
async function guarded<T>(availability: Availability | undefined, call: () => Promise<T>): Promise<T> {
  try {
    const result = await call();
    availability?.ok();
    return result;
  } catch (err) {
    if (!isConnectionError(err)) throw err;
    availability?.down(err);
    throw new DependencyUnavailableError('store', `store unavailable: ${(err as Error).message}`, { cause: err });
  }
}

/** Opens a pg.Pool on `databaseUrl` and checks it answers. No migrations. */
export async function openPostgres(databaseUrl: string, opts: { max?: number; availability?: Availability } = {}): Promise<Db> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: opts.max ?? 10, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, idleTimeoutMillis: IDLE_TIMEOUT_NEVER });
  const statementPool = (options: string): pg.Pool => new pg.Pool({
    connectionString: databaseUrl, max: STATEMENT_POOL_SIZE, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, idleTimeoutMillis: IDLE_TIMEOUT_NEVER, options,
  });
  const durablePool = statementPool(STATEMENT_SESSIONS.durable);
  const asyncPool = statementPool(STATEMENT_SESSIONS.async);
  const availability = opts.availability;
  let closed = false;
  // An idle client losing its connection must not crash the process; the next query reconnects.
  // After close(), pool.end() may resolve before the server has seen every disconnect: stay quiet.
  const onIdleError = (err: Error) => {
    if (!closed) availability?.down(err);
  };
  for (const p of [pool, durablePool, asyncPool]) p.on('error', onIdleError);
  try {
    await pool.query('SELECT 1');
  } catch (err) {
    await Promise.all([pool, durablePool, asyncPool].map((p) => p.end().catch(() => undefined)));
    throw err;
  }
  return {
    kind: 'postgres',
    query<T>(sql: string, params?: unknown[]) {
      return guarded(availability, async () => (await pool.query(sql, params)).rows as T[]);
    },
    async exec(sql: string) {
      await guarded(availability, () => pool.query(sql));
    },
    run<T>(statement: Statement, values: unknown[]) {
      const target = statement.commit === 'async' ? asyncPool : durablePool;
      return guarded(availability, async () => (await target.query({ name: statement.name, text: statement.text, values })).rows as T[]);
    },
    transaction<T>(fn: (tx: Tx) => Promise<T>) {
      return guarded(availability, () => runTransaction(pool, fn));
    },
    listen(channel: string, handler: (payload: string) => void) {
      return listenPostgres(databaseUrl, channel, handler);
    },
    async close() {
      if (closed) return;
      closed = true;
      await Promise.all([pool.end(), durablePool.end(), asyncPool.end()]);
    },
  };
}

/** BEGIN, fn, COMMIT on one pooled client; a client whose ROLLBACK failed is discarded. */
async function runTransaction<T>(pool: pg.Pool, fn: (tx: Tx) => Promise<T>): Promise<T> {
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
}
