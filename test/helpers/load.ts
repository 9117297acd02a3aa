/**
 * Concurrent load for outage tests: `count` workers each call `work` again and again (a short pause
 * between calls) until stopped, collecting every result, while the test cuts and restores a dependency.
 */

/** Running workers: what they collected so far, and a stop that waits for their last calls. */
export interface Workers<T> {
  results: T[];
  stop(): Promise<void>;
}

/** Starts `count` workers; worker `i` calls `work(i)` in a loop. */
export function startWorkers<T>(count: number, work: (worker: number) => Promise<T>): Workers<T> {
  const results: T[] = [];
  let running = true;
  const loops = Array.from({ length: count }, async (_, i) => {
    while (running) {
      results.push(await work(i));
      await new Promise((ok) => setTimeout(ok, 5));
    }
  });
  return { results, async stop() { running = false; await Promise.all(loops); } };
}
