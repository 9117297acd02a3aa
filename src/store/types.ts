/**
 * The store handles every driver implements and every store user holds. Their own module so that
 * db.ts (which opens a driver) and the drivers (pglite.ts, postgres.ts) and migrate.ts depend on it
 * and not on each other (issue 9, point 5: no import cycles). Row conventions: see db.ts.
 */

/** Anything that runs one SQL statement with `$n` parameters and returns its rows. */
export interface Queryable {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
}

/** A transaction handle: single statements, plus `exec` for a multi-statement script (no parameters). */
export interface Tx extends Queryable {
  exec(sql: string): Promise<void>;
}

/**
 * A statement run often enough to be prepared: parsed and planned once per connection under its
 * `name` (one text per name). `commit: 'async'` runs it where a commit does not wait for the WAL flush
 * (synchronous_commit = off): only for money movements a crash may safely forget (migration 006).
 */
export interface Statement { readonly name: string; readonly text: string; readonly commit: 'durable' | 'async'; }

/** An open store. Inside `transaction`, use only the `tx` handle: on PGlite the outer handle waits. */
export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs a prepared statement alone, as its own transaction, committed as the statement says. */
  run<T = Record<string, unknown>>(statement: Statement, params: unknown[]): Promise<T[]>;
  /** Runs `fn` in BEGIN ... COMMIT (READ COMMITTED); any throw rolls back and is rethrown. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Runs a multi-statement script without parameters, outside any transaction. */
  exec(sql: string): Promise<void>;
  /** Calls `handler` with each NOTIFY payload on `channel` (PostgreSQL: replicas signal each other); resolves with the stop. */
  listen?(channel: string, handler: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
