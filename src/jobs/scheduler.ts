/**
 * Named background jobs on cron schedules, each run on one replica at a time (exclusive.ts), and
 * runnable at once by name (`POST /admin/jobs/{name}/run`), which answers what the run did.
 *
 * Schedules run on croner (no dependencies, about 40 µs to find the next time): the `cron` package
 * it replaces spent about 0.7 ms of the event loop on each tick's next time (luxon), a stall every
 * request in flight waited behind, every 5 s (issue 8, Latency: the p99 at 100 req/s).
 */
import { Cron } from 'croner';
import type { Db } from '../store/types.js';
import { runExclusive } from './exclusive.js';

/** One job: a name, a cron schedule (seconds field first allowed), and what one run does. */
export interface JobSpec {
  name: string;
  schedule: string;
  run: () => Promise<Record<string, unknown>>;
  /**
   * A cheap read-only check whether a run would find anything to do. A scheduled tick that it answers
   * false for skips the run, its transaction and its lock (a video-jobs tick every 5 s with no video
   * job is then one indexed read). `runNow` does not ask: the admin API always runs the job.
   */
  due?: () => Promise<boolean>;
}

/** What `runNow` answers: the job's own report, or `ran: false` when another replica held it. */
export interface JobRun {
  job: string;
  ran: boolean;
  result: Record<string, unknown> | null;
}

/** A cron schedule (seconds field first) every `ms`: in seconds under a minute, else in minutes. */
export function cronEvery(ms: number): string {
  const seconds = Math.max(1, Math.round(ms / 1000));
  return seconds < 60 ? `*/${seconds} * * * * *` : `0 */${Math.max(1, Math.round(seconds / 60))} * * * *`;
}

/** The reason a schedule is refused, or null when croner accepts it (5 or 6 fields, seconds first). */
export function scheduleError(schedule: string): string | null {
  try {
    new Cron(schedule, { paused: true }).stop();
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The jobs of one gateway process. */
export class Jobs {
  private readonly specs = new Map<string, JobSpec>();
  private readonly crons: Cron[] = [];
  /** Scheduled ticks in progress: stop() waits for them, so a drain never closes the store under one. */
  private readonly running = new Set<Promise<JobRun | null>>();
  /** Jobs with a run in progress in this process. */
  private readonly active = new Set<string>();

  constructor(private readonly db: Db, private readonly log: (message: string, fields: Record<string, unknown>) => void) {}

  /** Schedules `spec`; a tick never overlaps the job's previous run (croner's `protect`). */
  add(spec: JobSpec): void {
    this.specs.set(spec.name, spec);
    this.crons.push(new Cron(spec.schedule, { protect: true }, async () => {
      const run = this.tick(spec.name);
      this.running.add(run);
      try { await run; } finally { this.running.delete(run); }
    }));
  }

  /** The names of the registered jobs. */
  names(): string[] {
    return [...this.specs.keys()];
  }

  /**
   * What a scheduled tick does: nothing when the job's `due` check answers false; otherwise an
   * exclusive run, logged when its report has a non-zero figure. Never throws: a failure is logged.
   * Resolves to the run, or null when nothing was due.
   */
  async tick(name: string): Promise<JobRun | null> {
    const spec = this.specs.get(name);
    if (!spec) return null;
    try {
      if (spec.due && !(await spec.due())) return null;
      const done = await this.runNow(name);
      if (done?.ran && Object.values(done.result ?? {}).some((v) => v !== 0)) this.log(`job ${name} ran`, done.result ?? {});
      return done ?? null;
    } catch (error) {
      this.log(`job ${name} failed`, { error: error instanceof Error ? error.message : String(error) });
      return null;
    }
  }

  /**
   * Runs a job now (exclusively); undefined for an unknown name. A run of the same job already in
   * progress in this process answers `ran: false`, as another replica's would: the embedded store
   * takes no lock, and a scheduled tick and an admin run of the alerts' delivery would otherwise send
   * the same events twice.
   */
  async runNow(name: string): Promise<JobRun | undefined> {
    const spec = this.specs.get(name);
    if (!spec) return undefined;
    if (this.active.has(name)) return { job: name, ran: false, result: null };
    this.active.add(name);
    try {
      const result = await runExclusive(this.db, `job:${name}`, spec.run);
      return { job: name, ran: result !== null, result };
    } finally {
      this.active.delete(name);
    }
  }

  /** Stops every schedule, then waits for the scheduled runs in progress to finish (a tick never throws). */
  async stop(): Promise<void> {
    for (const cron of this.crons) cron.stop();
    await Promise.all(this.running);
  }
}
