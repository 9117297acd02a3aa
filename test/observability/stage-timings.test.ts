import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RequestContext, StageHandler } from '../../src/pipeline/context.js';

/** The metrics and stage-timings modules as a process started with GATEWAY_STAGE_TIMINGS=value loads them. */
async function load(value: string | undefined) {
  vi.resetModules();
  if (value === undefined) vi.stubEnv('GATEWAY_STAGE_TIMINGS', undefined as unknown as string); else vi.stubEnv('GATEWAY_STAGE_TIMINGS', value);
  const metrics = await import('../../src/observability/metrics.js');
  const timings = await import('../../src/observability/stage-timings.js');
  return { metrics, timings };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('per-stage timings (GATEWAY_STAGE_TIMINGS)', () => {
  afterEach(() => { vi.unstubAllEnvs(); vi.resetModules(); });

  it('is off unless the flag is 1: no histogram, handlers used as compiled', async () => {
    const { metrics, timings } = await load(undefined);
    expect(metrics.STAGE_DURATIONS).toBeNull();
    expect(timings.STAGE_TIMINGS_ENABLED).toBe(false);
    expect(await new metrics.GatewayMetrics().render()).not.toContain('gateway_stage_duration_seconds');
  });

  it('records each stage under its report name, and the last write', async () => {
    const { metrics, timings } = await load('1');
    const gm = new metrics.GatewayMetrics();
    const handlers: StageHandler[] = [
      () => undefined,
      async () => { await sleep(5); },
      async (ctx) => { ctx.finish = async () => { await sleep(3); }; },
      () => undefined,
    ];
    const wrapped = timings.timeStages(handlers, ['auth', 'admission', 'forward', 'meter']);
    const ctx = { finish: null } as unknown as RequestContext;
    for (const h of wrapped) await h(ctx);
    await ctx.finish!();
    const h = metrics.STAGE_DURATIONS!;
    for (const stage of ['auth', 'admission', 'upstream', 'settle', 'write']) expect(h.snapshot([stage]).count, stage).toBe(1);
    expect(h.snapshot(['admission']).sum).toBeGreaterThanOrEqual(0.004);
    expect(h.snapshot(['write']).sum).toBeGreaterThanOrEqual(0.002);
    expect(await gm.render()).toContain('gateway_stage_duration_seconds_count{stage="admission"} 1');
  });

  it('records a stage that throws, and rethrows', async () => {
    const { metrics, timings } = await load('1');
    const [wrapped] = timings.timeStages([() => { throw new Error('refused'); }], ['validate']);
    await expect(wrapped!({} as unknown as RequestContext)).rejects.toThrow('refused');
    expect(metrics.STAGE_DURATIONS!.snapshot(['validate']).count).toBe(1);
  });
});
