/**
 * Background jobs: a scheduled tick asks the job's `due` check first and skips the run (its
 * transaction and advisory lock) when nothing is due; the admin API's runNow always runs; a failing run
 * is logged, never thrown into the timer; schedules are checked when the configuration loads; and on
 * PostgreSQL a run held by one process is skipped by another.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { ManifestError } from '../../src/config/errors.js';
import { loadGateway } from '../../src/config/load.js';
import { Jobs, scheduleError } from '../../src/jobs/scheduler.js';
import type { Db } from '../../src/store/db.js';
import { copyConfig } from '../helpers/config.js';
import { openTestDb, storeKind } from '../helpers/db.js';

type Logged = { message: string; fields: Record<string, unknown> };

let cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

async function jobsOn(): Promise<{ db: Db; jobs: Jobs; logged: Logged[] }> {
  const store = await openTestDb();
  const logged: Logged[] = [];
  const jobs = new Jobs(store.db, (message, fields) => logged.push({ message, fields }));
  cleanup.push(async () => { await jobs.stop(); await store.dispose(); });
  return { db: store.db, jobs, logged };
}

/** A job on a schedule that never fires during a test, counting its checks and runs. */
function counted(name: string, due: boolean | undefined): { spec: Parameters<Jobs['add']>[0]; calls: { due: number; run: number } } {
  const calls = { due: 0, run: 0 };
  return {
    calls,
    spec: {
      name, schedule: '0 0 0 1 1 *',
      ...(due === undefined ? {} : { due: async () => { calls.due += 1; return due; } }),
      run: async () => { calls.run += 1; return { done: 1 }; },
    },
  };
}

describe('job schedules', () => {
  it('accepts five fields, or six with seconds first, and says why it refuses anything else', () => {
    for (const ok of ['*/5 * * * * *', '0 0 * * * *', '*/30 * * * *', '0 */2 * * * *']) expect(scheduleError(ok)).toBeNull();
    expect(scheduleError('every 5 seconds')).toMatch(/illegal characters|parts are required/);
    expect(scheduleError('*/0 * * * * *')).toMatch(/stepping/);
    expect(scheduleError('0 0 25 * * *')).toMatch(/hour/);
  });

  it('refuses a bad schedule when the configuration loads, naming the file and the field', async () => {
    for (const [section, field] of [['video_jobs', 'poll_schedule'], ['files', 'cleanup_schedule']] as const) {
      const copy = await copyConfig();
      await copy.editYaml('gateway.config.yaml', (doc) => { doc[section] = { ...doc[section], [field]: '*/0 * * * * *' }; });
      const error = await loadGateway(copy.configFile).then((raw) => compileGateway(raw, { env: {}, simulatorUrl: 'http://127.0.0.1:1' })).then(() => null, (e: unknown) => e);
      expect(error).toBeInstanceOf(ManifestError);
      expect((error as ManifestError).message).toContain(copy.configFile);
      expect((error as ManifestError).message).toContain(`/${section}/${field}`);
      expect((error as ManifestError).message).toContain('not a cron schedule');
    }
  });
});

describe(`scheduled jobs (${storeKind})`, () => {
  it('a tick skips the run when the job says nothing is due, and runs it when something is', async () => {
    const { jobs, logged } = await jobsOn();
    const idle = counted('idle', false);
    const busy = counted('busy', true);
    jobs.add(idle.spec);
    jobs.add(busy.spec);
    expect(await jobs.tick('idle')).toBeNull();
    expect(idle.calls).toEqual({ due: 1, run: 0 });
    expect(await jobs.tick('busy')).toEqual({ job: 'busy', ran: true, result: { done: 1 } });
    expect(busy.calls).toEqual({ due: 1, run: 1 });
    expect(logged).toEqual([{ message: 'job busy ran', fields: { done: 1 } }]);
  });

  it('runNow (the admin API) runs without asking, and a job without a check always runs on its tick', async () => {
    const { jobs } = await jobsOn();
    const idle = counted('idle', false);
    const plain = counted('plain', undefined);
    jobs.add(idle.spec);
    jobs.add(plain.spec);
    expect(await jobs.runNow('idle')).toEqual({ job: 'idle', ran: true, result: { done: 1 } });
    expect(idle.calls).toEqual({ due: 0, run: 1 });
    expect((await jobs.tick('plain'))?.ran).toBe(true);
    expect(plain.calls.run).toBe(1);
  });

  it('logs a failed check or run instead of throwing into the timer', async () => {
    const { jobs, logged } = await jobsOn();
    jobs.add({ name: 'broken-check', schedule: '0 0 0 1 1 *', due: async () => { throw new Error('store gone'); }, run: async () => ({}) });
    jobs.add({ name: 'broken-run', schedule: '0 0 0 1 1 *', run: async () => { throw new Error('vendor gone'); } });
    expect(await jobs.tick('broken-check')).toBeNull();
    expect(await jobs.tick('broken-run')).toBeNull();
    expect(logged).toEqual([
      { message: 'job broken-check failed', fields: { error: 'store gone' } },
      { message: 'job broken-run failed', fields: { error: 'vendor gone' } },
    ]);
  });

  it('fires on its schedule and asks the check on every tick', async () => {
    const { jobs } = await jobsOn();
    const idle = counted('every-second', false);
    jobs.add({ ...idle.spec, schedule: '* * * * * *' });
    const deadline = Date.now() + 5_000;
    while (idle.calls.due < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(idle.calls.due).toBeGreaterThanOrEqual(2);
    expect(idle.calls.run).toBe(0);
  });

  it('stop() waits for a scheduled run in progress, so a drain never closes the store under it', async () => {
    const { jobs } = await jobsOn();
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    let started!: () => void;
    const running = new Promise<void>((r) => { started = r; });
    let finished = false;
    jobs.add({ name: 'slow', schedule: '* * * * * *', run: async () => { started(); await held; finished = true; return { done: 1 }; } });
    await running;
    let stopped = false;
    const stopping = jobs.stop().then(() => { stopped = true; });
    await new Promise((r) => setTimeout(r, 50));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(finished).toBe(true);
  });

  it('skips a run while the same job runs in this process (the embedded store takes no lock)', async () => {
    const { jobs } = await jobsOn();
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    let runs = 0;
    jobs.add({ name: 'slow', schedule: '0 0 0 1 1 *', run: async () => { runs += 1; await held; return { done: runs }; } });
    const first = jobs.runNow('slow');
    await new Promise((r) => setTimeout(r, 20));
    expect(await jobs.runNow('slow')).toEqual({ job: 'slow', ran: false, result: null });
    expect(await jobs.tick('slow')).toEqual({ job: 'slow', ran: false, result: null });
    release();
    expect(await first).toEqual({ job: 'slow', ran: true, result: { done: 1 } });
    expect((await jobs.runNow('slow'))?.ran).toBe(true);
    expect(runs).toBe(2);
  });

  it.runIf(storeKind === 'postgres')('skips a run that another process holds (PostgreSQL advisory lock)', async () => {
    const store = await openTestDb();
    const { openDb } = await import('../../src/store/db.js');
    const second = await openDb({ databaseUrl: store.databaseUrl! });
    cleanup.push(async () => { await second.close(); await store.dispose(); });
    let release!: () => void;
    const held = new Promise<void>((r) => { release = r; });
    let started!: () => void;
    const running = new Promise<void>((r) => { started = r; });
    const a = new Jobs(store.db, () => undefined);
    const b = new Jobs(second, () => undefined);
    a.add({ name: 'shared', schedule: '0 0 0 1 1 *', run: async () => { started(); await held; return { done: 1 }; } });
    b.add({ name: 'shared', schedule: '0 0 0 1 1 *', run: async () => ({ done: 2 }) });
    const first = a.runNow('shared');
    await running;
    expect(await b.tick('shared')).toEqual({ job: 'shared', ran: false, result: null });
    release();
    expect(await first).toEqual({ job: 'shared', ran: true, result: { done: 1 } });
    expect(await b.tick('shared')).toEqual({ job: 'shared', ran: true, result: { done: 2 } });
    await Promise.all([a.stop(), b.stop()]);
  });
});
