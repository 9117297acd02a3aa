/**
 * The data folder lock (src/store/lock.ts): one process per PGlite folder. A live holder is refused with
 * the folder and its PID; a lock of a dead process (or one naming our own PID: a restart reused it) is
 * recovered; release removes only our own lock; several processes recovering one stale lock at once
 * leave exactly one winner.
 *
 * Store-independent: runs in the pglite project only. The race test runs the compiled module
 * (`dist/src/store/lock.js`, built by `npm test`; else `npx tsc -p tsconfig.json`) in child processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireDataDirLock, LOCK_FILE, StoreLockedError, type DataDirLock } from '../../src/store/lock.js';
import { openPglite } from '../../src/store/pglite.js';
import { storeKind } from '../helpers/db.js';

const COMPILED_LOCK = resolve('dist/src/store/lock.js');

/** A PID that no process has any more: a child that already exited (node reaps it on exit). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const pid = child.pid!;
  await new Promise((ok) => child.once('exit', ok));
  return pid;
}

/** A live process that is not us and not our parent. */
async function liveChild(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  await new Promise((ok, fail) => { child.once('spawn', ok); child.once('error', fail); });
  return child;
}

function writeLock(dir: string, pid: number, startedAt = '2020-01-01T00:00:00.000Z'): string {
  const text = `${JSON.stringify({ pid, hostname: 'test-host', started_at: startedAt })}\n`;
  writeFileSync(join(dir, LOCK_FILE), text);
  return text;
}

function lockPid(dir: string): number {
  return (JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as { pid: number }).pid;
}

describe.skipIf(storeKind !== 'pglite')('data folder lock', () => {
  let root: string;
  let dir: string;
  const locks: DataDirLock[] = [];
  const children: ChildProcess[] = [];

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'gw-lock-'));
    dir = join(root, 'data');
    mkdirSync(dir);
  });
  afterEach(() => {
    for (const lock of locks.splice(0)) lock.release();
    for (const child of children.splice(0)) child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  async function take(folder = dir): Promise<DataDirLock> {
    const lock = await acquireDataDirLock(folder);
    locks.push(lock);
    return lock;
  }

  it('takes a free folder (created if missing) with our pid, and release removes the lock, once', async () => {
    const folder = join(dir, 'nested');
    const lock = await take(folder);
    expect(lock.path).toBe(join(folder, LOCK_FILE));
    expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toMatchObject({ pid: process.pid, hostname: expect.any(String), started_at: expect.any(String) });
    lock.release();
    expect(existsSync(lock.path)).toBe(false);
    expect(() => lock.release()).not.toThrow();
    lock.release();
  });

  it('refuses a folder a live process holds, naming the folder and its pid, and leaves its lock alone', async () => {
    const holder = await liveChild();
    children.push(holder);
    const text = writeLock(dir, holder.pid!);
    const error = await acquireDataDirLock(dir).then(() => null, (e: unknown) => e);
    expect(error).toBeInstanceOf(StoreLockedError);
    expect((error as StoreLockedError).pid).toBe(holder.pid);
    expect((error as StoreLockedError).dataDir).toBe(dir);
    expect((error as Error).message).toContain(`the data folder ${dir} is in use by another gateway process (PID ${holder.pid} on host test-host)`);
    expect((error as Error).message).toContain('GATEWAY_DATA_DIR');
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(text);
  });

  it('recovers the lock of a dead process', async () => {
    const pid = await deadPid();
    writeLock(dir, pid);
    const lock = await take();
    expect(lockPid(dir)).toBe(process.pid);
    expect(existsSync(`${lock.path}.recover`)).toBe(false);
  });

  it('treats a lock naming our own pid that we did not take as stale (a restart reused the pid)', async () => {
    writeLock(dir, process.pid);
    const lock = await take();
    expect(JSON.parse(readFileSync(lock.path, 'utf8')).started_at).not.toBe('2020-01-01T00:00:00.000Z');
  });

  it('refuses a folder this process already holds, until it is released', async () => {
    const first = await take();
    await expect(acquireDataDirLock(dir)).rejects.toThrow(`the data folder ${dir} is already open in this process (PID ${process.pid})`);
    expect(lockPid(dir)).toBe(process.pid);
    first.release();
    await take();
  });

  it('release removes only a lock that is still ours', async () => {
    const lock = await take();
    const other = writeLock(dir, 4_000_000);
    lock.release();
    expect(readFileSync(lock.path, 'utf8')).toBe(other);
  });

  it('an unreadable lock: refused while young (its writer may be mid-write), recovered once old', async () => {
    const path = join(dir, LOCK_FILE);
    writeFileSync(path, '{"pid": 12');
    await expect(acquireDataDirLock(dir)).rejects.toThrow(StoreLockedError);
    expect(readFileSync(path, 'utf8')).toBe('{"pid": 12');
    const old = new Date(Date.now() - 60_000);
    utimesSync(path, old, old);
    await take();
    expect(lockPid(dir)).toBe(process.pid);
  });

  it('a recovery lock of a process that died while recovering is itself stale after 10 s', async () => {
    writeLock(dir, await deadPid());
    const recovery = join(dir, `${LOCK_FILE}.recover`);
    mkdirSync(recovery);
    // A fresh one: another process is recovering right now, so we wait (and give up after 2 s).
    await expect(acquireDataDirLock(dir)).rejects.toThrow(/being taken over by another process/);
    const old = new Date(Date.now() - 60_000);
    utimesSync(recovery, old, old);
    await take();
    expect(lockPid(dir)).toBe(process.pid);
    expect(existsSync(recovery)).toBe(false);
  });

  it('openPglite holds the folder until close, and a failed open releases it', async () => {
    const db = await openPglite(dir);
    try {
      expect(lockPid(dir)).toBe(process.pid);
      await expect(openPglite(dir)).rejects.toThrow(StoreLockedError);
    } finally {
      await db.close();
    }
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    const again = await openPglite(dir);
    await again.close();
    // A folder PGlite cannot start on (a bogus PG_VERSION): the open fails and leaves no lock.
    const broken = join(root, 'broken');
    mkdirSync(broken);
    writeFileSync(join(broken, 'PG_VERSION'), 'garbage\n');
    await expect(openPglite(broken)).rejects.toThrow();
    expect(existsSync(join(broken, LOCK_FILE))).toBe(false);
  });

  describe('several processes recovering one stale lock at once', () => {
    const racers: ChildProcess[] = [];
    afterAll(() => { for (const child of racers) child.kill('SIGKILL'); });

    /** Each child loads the compiled lock module, says ready, takes the lock on "go", reports, and holds it until stdin ends. */
    const RACER = `
      const { acquireDataDirLock } = await import(process.argv[1]);
      const lines = (await import('node:readline')).createInterface({ input: process.stdin });
      console.log('ready');
      for await (const line of lines) {
        if (line !== 'go') continue;
        try { await acquireDataDirLock(process.argv[2]); console.log(JSON.stringify({ ok: true, pid: process.pid })); }
        catch (e) { console.log(JSON.stringify({ ok: false, pid: process.pid, name: e.name, holder: e.pid ?? null, message: e.message })); }
      }`;

    type Outcome = { ok: boolean; pid: number; name?: string; holder?: number | null; message?: string };

    async function race(n: number): Promise<Outcome[]> {
      const started = Array.from({ length: n }, () => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', RACER, pathToFileURL(COMPILED_LOCK).href, dir], { stdio: ['pipe', 'pipe', 'inherit'] });
        racers.push(child);
        const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
        return { child, next: async (): Promise<string> => { const { value, done } = await lines.next(); if (done) throw new Error(`racer ${child.pid} exited`); return value as string; } };
      });
      for (const racer of started) expect(await racer.next()).toBe('ready');
      for (const racer of started) racer.child.stdin!.write('go\n');
      const outcomes = await Promise.all(started.map(async (r) => JSON.parse(await r.next()) as Outcome));
      for (const racer of started) racer.child.stdin!.end();
      await Promise.all(started.map((r) => new Promise((ok) => (r.child.exitCode !== null ? ok(null) : r.child.once('exit', ok)))));
      return outcomes;
    }

    it('exactly one wins; the others are refused naming the winner', async () => {
      expect(existsSync(COMPILED_LOCK), `${COMPILED_LOCK} missing: run npx tsc -p tsconfig.json`).toBe(true);
      // Probabilistic: a recovery without the recovery lock (unlink the stale lock, create ours) lets two
      // racers win in about one round in five of 8 racers on 2 cores; five rounds catch it most of the time.
      for (let round = 0; round < 5; round++) {
        writeLock(dir, await deadPid());
        const outcomes = await race(8);
        const winners = outcomes.filter((o) => o.ok);
        expect(winners, JSON.stringify(outcomes)).toHaveLength(1);
        const winner = winners[0]!.pid;
        for (const loser of outcomes.filter((o) => !o.ok)) {
          expect(loser, JSON.stringify(outcomes)).toMatchObject({ name: 'StoreLockedError', holder: winner });
          expect(loser.message).toContain(`PID ${winner}`);
        }
        // The winner released its lock at exit.
        expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
        expect(existsSync(join(dir, `${LOCK_FILE}.recover`))).toBe(false);
      }
    }, 60_000);
  });
});
