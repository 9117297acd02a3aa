/**
 * The gateway's clock for lifetimes it decides itself (file expiry, upload URLs, cleanup windows,
 * rolling quotas). Production uses the system clock; tests inject one they move by hand, so expiry
 * and cleanup are tested without waiting. Timestamps are computed here and passed to SQL as
 * parameters, never taken from the database's now().
 */

/** A source of the current time. */
export interface Clock {
  now(): Date;
}

/** The system clock. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock a test moves by hand (starts at `start`, default the real now). */
export class ManualClock implements Clock {
  private ms: number;
  constructor(start: Date = new Date()) {
    this.ms = start.getTime();
  }
  now(): Date {
    return new Date(this.ms);
  }
  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.ms += ms;
  }
}
