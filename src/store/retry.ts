/**
 * Retries an idempotent store call through a store outage (issue 8 item 3). Only for calls that are
 * safe to repeat: a settle (a second settle of a hold charges nothing and returns the first's rows)
 * and a release (a closed hold is left alone). Anything but DependencyUnavailableError fails at once.
 */
import { DependencyUnavailableError } from '../errors.js';

/** How long a settle or release keeps trying while the store is away, and the first and last pause. */
export const STORE_RETRY = { deadlineMs: 30_000, firstPauseMs: 50, maxPauseMs: 1_000 };

const sleep = (ms: number): Promise<void> => new Promise((ok) => setTimeout(ok, ms));

/** Runs `call` until it succeeds, fails for another reason, or the deadline passes (then its last error). */
export async function retryWhileUnavailable<T>(call: () => Promise<T>, deadlineMs = STORE_RETRY.deadlineMs): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  let pause = STORE_RETRY.firstPauseMs;
  for (;;) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof DependencyUnavailableError) || Date.now() + pause > deadline) throw error;
    }
    await sleep(pause);
    pause = Math.min(pause * 2, STORE_RETRY.maxPauseMs);
  }
}
