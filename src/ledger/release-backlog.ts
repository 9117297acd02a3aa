/**
 * Releases that could not reach the store (issue 8 item 3). A request that fails during a store
 * outage must not wait for the store, nor keep its concurrency slot, to give its reservation back:
 * its hold id is kept here and released, with every other one, once the store answers again. A
 * release is idempotent, so retrying one that did commit before its answer was lost is harmless.
 * Bounded: past `max` ids the sweeper gives the rest back when their holds expire.
 */
import { DependencyUnavailableError } from '../errors.js';

/** First and longest pause between two attempts. */
const FIRST_PAUSE_MS = 100;
const MAX_PAUSE_MS = 2_000;

/** Hold ids waiting for the store, retried together. */
export class ReleaseBacklog {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private pause = FIRST_PAUSE_MS;

  constructor(private readonly release: (holdId: string) => Promise<void>, private readonly max = 100_000) {}

  /** Keeps `holdId` for the next attempt. */
  add(holdId: string): void {
    if (this.pending.size < this.max) this.pending.add(holdId);
    this.schedule();
  }

  /** How many releases wait for the store. */
  get size(): number {
    return this.pending.size;
  }

  /** Stops retrying (the process is closing; the sweeper covers what is left). */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending.clear();
  }

  private schedule(): void {
    if (this.timer || this.pending.size === 0) return;
    this.timer = setTimeout(() => { this.timer = null; void this.attempt(); }, this.pause);
    this.timer.unref();
  }

  private async attempt(): Promise<void> {
    const ids = [...this.pending];
    const results = await Promise.allSettled(ids.map((id) => this.release(id)));
    let unavailable = false;
    results.forEach((result, i) => {
      if (result.status === 'rejected' && result.reason instanceof DependencyUnavailableError) unavailable = true;
      // Released, or failed for another reason (nothing a retry would change): either way, done here.
      else this.pending.delete(ids[i]!);
    });
    this.pause = unavailable ? Math.min(this.pause * 2, MAX_PAUSE_MS) : FIRST_PAUSE_MS;
    this.schedule();
  }
}
