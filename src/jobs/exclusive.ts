/**
 * Background jobs run on one process at a time (issue 4): each run takes a PostgreSQL advisory lock
 * held by a transaction for the run's duration; a process that cannot take it skips that run.
 * PGlite is one process by construction (its data folder cannot be shared), so no lock is needed.
 */
import { advisoryLockKey } from '../store/advisory.js';
import type { Db } from '../store/db.js';

/** A stable 63-bit lock key for a job name. */
export function jobLockKey(name: string): bigint {
  return advisoryLockKey(`gateway-job:${name}`);
}

/** Runs `job` unless another process is running the same job; resolves to null when skipped. */
export async function runExclusive<T>(db: Db, name: string, job: () => Promise<T>): Promise<T | null> {
  if (db.kind === 'pglite') return job();
  return db.transaction(async (tx) => {
    const [row] = await tx.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS locked', [jobLockKey(name)]);
    return row?.locked ? job() : null;
  });
}
