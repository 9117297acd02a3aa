/** Loading the metrics and stage-timings modules afresh, as a process started with a given GATEWAY_STAGE_TIMINGS loads them. */
import { vi } from 'vitest';

/** The two modules as a process started with GATEWAY_STAGE_TIMINGS=value (unset when undefined) loads them. */
export async function loadStageTimings(value: string | undefined) {
  vi.resetModules();
  if (value === undefined) vi.stubEnv('GATEWAY_STAGE_TIMINGS', undefined as unknown as string); else vi.stubEnv('GATEWAY_STAGE_TIMINGS', value);
  const metrics = await import('../../src/observability/metrics.js');
  const timings = await import('../../src/observability/stage-timings.js');
  return { metrics, timings };
}
