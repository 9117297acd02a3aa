/**
 * Named background jobs on cron schedules, each run on one replica at a time (exclusive.ts), and
 * runnable at once by name (`POST /admin/jobs/{name}/run`), which answers what the run did.
 */
import { CronJob } from 'cron';
import type { Db } from '../store/types.js';
import { runExclusive } from './exclusive.js';

/** One job: a name, a cron schedule (seconds field first allowed), and what one run does. */
export interface JobSpec {
  name: string;
  schedule: string;
  run: () => Promise<Record<string, unknown>>;
}

/** What `runNow` answers: the job's own report, or `ran: false` when another replica held it. */
export interface JobRun {
  job: string;
  ran: boolean;
  result: Record<string, unknown> | null;
}

/** The jobs of one gateway process. */
export class Jobs {
  private readonly specs = new Map<string, JobSpec>();
  private readonly crons: CronJob[] = [];

  constructor(private readonly db: Db, private readonly log: (message: string, fields: Record<string, unknown>) => void) {}

  /** Schedules `spec`; its ticks run exclusively and log their report when it did anything. */
  add(spec: JobSpec): void {
    this.specs.set(spec.name, spec);
    this.crons.push(CronJob.from({
      cronTime: spec.schedule, start: true,
      onTick: async () => {
        try {
          const done = await this.runNow(spec.name);
          if (done?.ran && Object.values(done.result ?? {}).some((v) => v !== 0)) this.log(`job ${spec.name} ran`, done.result ?? {});
        } catch (error) {
          this.log(`job ${spec.name} failed`, { error: error instanceof Error ? error.message : String(error) });
        }
      },
    }));
  }

  /** The names of the registered jobs. */
  names(): string[] {
    return [...this.specs.keys()];
  }

  /** Runs a job now (exclusively); undefined for an unknown name. */
  async runNow(name: string): Promise<JobRun | undefined> {
    const spec = this.specs.get(name);
    if (!spec) return undefined;
    const result = await runExclusive(this.db, `job:${name}`, spec.run);
    return { job: name, ran: result !== null, result };
  }

  /** Stops every schedule (runs in progress finish). */
  async stop(): Promise<void> {
    await Promise.all(this.crons.map((c) => c.stop()));
  }
}
