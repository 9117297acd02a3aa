/**
 * One process per embedded data folder. PGlite loads the folder into its own memory and writes it back,
 * so two gateways on one folder each serve their own view and the last to stop erases the other's
 * writes (issue 8). The holder keeps `<dataDir>/gateway.lock` = JSON {pid, hostname, started_at}; a
 * second process finds it, sees the PID alive and refuses. A lock left by a crash (kill -9) names a dead
 * PID and is recovered, under a short recovery lock so that two starters cannot both recover it.
 *
 * Like PostgreSQL's postmaster.pid (miscinit.c, CreateLockFile): the PID is checked with kill(pid, 0),
 * and our own PID in a lock we did not take means a restart reused it (containers number processes
 * from 1 again), not a live holder.
 */
import { closeSync, fstatSync, linkSync, mkdirSync, openSync, readFileSync, realpathSync, rmdirSync, rmSync, statSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';

/** The lock file's name inside the data folder. */
export const LOCK_FILE = 'gateway.lock';

/** A lock file that cannot be read as JSON is stale only when older than this: a writer may be mid-write. */
const GARBAGE_GRACE_MS = 5_000;
/** A recovery lock older than this was left by a process that died while recovering (recovery takes ms). */
const RECOVERY_STALE_MS = 10_000;
/** How long to keep retrying while another process recovers, or while a young unreadable lock may still be written. */
const WAIT_MS = 2_000;
/** Where `held` lives on globalThis. */
const HELD = Symbol.for('unified-ai-gateway.store.lock.held');

/** The data folder is held by another live process (or already open in this one). */
export class StoreLockedError extends Error {
  override readonly name = 'StoreLockedError';
  constructor(
    /** The data folder, absolute. */
    readonly dataDir: string,
    /** The holder's PID, when the lock file could be read. */
    readonly pid: number | null,
    message: string,
  ) {
    super(message);
  }
}

/** A held data folder lock. */
export interface DataDirLock {
  /** The data folder, absolute. */
  readonly dataDir: string;
  /** The lock file. */
  readonly path: string;
  /** Removes the lock file if it is still ours. Idempotent. */
  release(): void;
}

interface Holder { pid: number; hostname: string; started_at: string }

/** What a look at the lock file found. `text` and `ino` identify this very file for a later re-check. */
type Seen =
  | { kind: 'missing' }
  | { kind: 'holder'; holder: Holder; text: string; ino: number }
  | { kind: 'garbage'; text: string; ino: number; ageMs: number };

/**
 * Folders (real paths) this process holds -> their release, also run at exit. Kept on globalThis so that
 * two copies of this module in one process (a test runner's module isolation) still see each other:
 * to the PID check they are one process.
 */
const shared = globalThis as { [HELD]?: Map<string, () => void> };
const held = (shared[HELD] ??= new Map<string, () => void>());
let exitHookInstalled = false;

function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | null)?.code;
}

const sleep = (ms: number): Promise<void> => new Promise((ok) => setTimeout(ok, ms));

function parseHolder(text: string): Holder | null {
  try {
    const value = JSON.parse(text) as Partial<Holder> | null;
    if (!value || typeof value !== 'object' || !Number.isSafeInteger(value.pid) || value.pid! <= 0) return null;
    return { pid: value.pid!, hostname: String(value.hostname ?? ''), started_at: String(value.started_at ?? '') };
  } catch {
    return null;
  }
}

function look(path: string): Seen {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if (errorCode(err) === 'ENOENT') return { kind: 'missing' };
    throw err;
  }
  try {
    // Stat and read through one descriptor: both describe the same file even if the name is replaced.
    const stat = fstatSync(fd);
    const text = readFileSync(fd, 'utf8');
    const holder = parseHolder(text);
    if (holder) return { kind: 'holder', holder, text, ino: stat.ino };
    return { kind: 'garbage', text, ino: stat.ino, ageMs: Date.now() - stat.mtimeMs };
  } finally {
    closeSync(fd);
  }
}

/** Same file, same content: nobody replaced the lock between two looks. */
function same(a: Seen, b: Seen): boolean {
  return a.kind !== 'missing' && b.kind !== 'missing' && a.ino === b.ino && a.text === b.text;
}

/** kill(pid, 0): ESRCH means gone; EPERM means alive but someone else's. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errorCode(err) === 'EPERM';
  }
}

/** Is the holder a live process other than us? (The folders we hold are checked before: see `held`.) */
function liveHolder(holder: Holder): boolean {
  return holder.pid !== process.pid && alive(holder.pid);
}

/**
 * Creates `path` holding `content` only if it does not exist, all at once: the content goes to a temp
 * file that is then hard-linked to `path` (link fails with EEXIST if it exists), so no reader ever sees a
 * half-written lock. Filesystems without hard links fall back to O_EXCL.
 */
function createExclusive(path: string, content: string): boolean {
  const temp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(temp, content, { flag: 'wx' });
  try {
    linkSync(temp, path);
    return true;
  } catch (err) {
    const code = errorCode(err);
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EOPNOTSUPP') throw err;
    let fd: number;
    try {
      fd = openSync(path, 'wx');
    } catch (openErr) {
      if (errorCode(openErr) === 'EEXIST') return false;
      throw openErr;
    }
    try { writeSync(fd, content); } finally { closeSync(fd); }
    return true;
  } finally {
    try { unlinkSync(temp); } catch { /* already gone */ }
  }
}

/**
 * Replaces the stale lock `seen` by ours, under the recovery lock `<lock>.recover` (a folder: mkdir is
 * atomic). Under it the lock is looked at again: only the file we judged stale is removed, never one
 * another process created meanwhile. Returns 'acquired', 'lost' (someone else's lock is there now:
 * judge it again) or 'busy' (another process is recovering: wait).
 */
function recover(path: string, seen: Seen, content: string): 'acquired' | 'lost' | 'busy' {
  const recoveryPath = `${path}.recover`;
  try {
    mkdirSync(recoveryPath);
  } catch (err) {
    if (errorCode(err) !== 'EEXIST') throw err;
    try {
      if (Date.now() - statSync(recoveryPath).mtimeMs > RECOVERY_STALE_MS) rmSync(recoveryPath, { recursive: true, force: true });
    } catch { /* removed meanwhile */ }
    return 'busy';
  }
  try {
    const again = look(path);
    if (again.kind !== 'missing') {
      if (!same(again, seen)) return 'lost';
      unlinkSync(path);
    }
    return createExclusive(path, content) ? 'acquired' : 'lost';
  } finally {
    try { rmdirSync(recoveryPath); } catch (err) { if (errorCode(err) !== 'ENOENT') throw err; }
  }
}

function lockedError(dir: string, path: string, seen: Seen): StoreLockedError {
  const advice = 'stop it first, or point GATEWAY_DATA_DIR at another folder';
  if (seen.kind !== 'holder') {
    return new StoreLockedError(dir, null, `the data folder ${dir} is in use by another gateway process (its lock file ${path} is being written); ${advice}`);
  }
  const { pid, hostname: host } = seen.holder;
  const where = host && host !== hostname() ? ` on host ${host}` : '';
  // A PID reused by an unrelated process after a reboot also looks alive: say how to get out of it.
  return new StoreLockedError(dir, pid,
    `the data folder ${dir} is in use by another gateway process (PID ${pid}${where}); ${advice} (if PID ${pid} is not a gateway, delete ${path})`);
}

/**
 * Takes the data folder (created if missing) for this process, or throws StoreLockedError naming the
 * folder and the PID holding it. A lock of a dead process is recovered. Released by `release()`, and
 * at the latest when the process exits normally.
 */
export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock> {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  const key = realpathSync(dir);
  // Our own PID in the lock normally means a restart reused it; a folder already open here is not that.
  if (held.has(key)) throw new StoreLockedError(dir, process.pid, `the data folder ${dir} is already open in this process (PID ${process.pid}); close it first`);
  const path = join(dir, LOCK_FILE);
  const content = `${JSON.stringify({ pid: process.pid, hostname: hostname(), started_at: new Date().toISOString() })}\n`;
  const deadline = Date.now() + WAIT_MS;

  for (;;) {
    if (createExclusive(path, content)) break;
    const seen = look(path);
    if (seen.kind === 'missing') continue; // released between the two steps
    if (seen.kind === 'holder' ? liveHolder(seen.holder) : seen.ageMs <= GARBAGE_GRACE_MS) {
      if (seen.kind === 'holder' || Date.now() >= deadline) throw lockedError(dir, path, seen);
      await sleep(50); // an unreadable young lock: give its writer a moment
      continue;
    }
    const outcome = recover(path, seen, content);
    if (outcome === 'acquired') break;
    if (Date.now() >= deadline) throw new StoreLockedError(dir, null, `the data folder ${dir} is being taken over by another process (${path}.recover exists); try again`);
    if (outcome === 'busy') await sleep(20);
  }

  let released = false;
  const release = (): void => {
    if (released) return;
    released = true;
    held.delete(key);
    try {
      if (readFileSync(path, 'utf8') === content) unlinkSync(path);
    } catch (err) {
      if (errorCode(err) !== 'ENOENT') throw err;
    }
  };
  held.set(key, release);
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // process.exit() skips close(): leave no lock behind (a leftover one would be recovered anyway).
    process.on('exit', () => { for (const done of [...held.values()]) { try { done(); } catch { /* exiting */ } } });
  }
  return { dataDir: dir, path, release };
}
