import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RequestContext, StageHandler } from '../../src/pipeline/context.js';
import type { Db, Statement } from '../../src/store/types.js';
import { loadStageTimings } from '../helpers/stage-timings.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('per-stage timings (GATEWAY_STAGE_TIMINGS)', () => {
  afterEach(() => { vi.unstubAllEnvs(); vi.resetModules(); });

  it('is off unless the flag is 1: no histogram, handlers used as compiled', async () => {
    const { metrics, timings } = await loadStageTimings(undefined);
    expect(metrics.STAGE_DURATIONS).toBeNull();
    expect(timings.STAGE_TIMINGS_ENABLED).toBe(false);
    expect(await new metrics.GatewayMetrics().render()).not.toContain('gateway_stage_duration_seconds');
  });

  it('records each stage under its report name, and the last write', async () => {
    const { metrics, timings } = await loadStageTimings('1');
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
    const { metrics, timings } = await loadStageTimings('1');
    const [wrapped] = timings.timeStages([() => { throw new Error('refused'); }], ['validate']);
    await expect(wrapped!({} as unknown as RequestContext)).rejects.toThrow('refused');
    expect(metrics.STAGE_DURATIONS!.snapshot(['validate']).count).toBe(1);
  });

  it('leaves the store as it is when off', async () => {
    const { metrics, timings } = await loadStageTimings(undefined);
    const db = { kind: 'postgres' } as unknown as Db;
    expect(timings.timeStatements(db)).toBe(db);
    expect(metrics.STATEMENT_DURATIONS).toBeNull();
    expect(await new metrics.GatewayMetrics().render()).not.toContain('gateway_store_statement_duration_seconds');
  });

  it('times each prepared statement under its name, a failing one too, and passes everything else through', async () => {
    const { metrics, timings } = await loadStageTimings('1');
    const calls: string[] = [];
    const inner: Db = {
      kind: 'postgres',
      // At least 2 ms by the clock the timer reads (a timer may fire early by that clock on a busy loop).
      async run<T>(statement: Statement) { const from = performance.now(); while (performance.now() - from < 2) await sleep(1); if (statement.name === 'broken') throw new Error('rolled back'); return [{ ok: statement.name }] as T[]; },
      async query<T>(sql: string) { calls.push(sql); return [] as T[]; },
      async exec(sql: string) { calls.push(sql); },
      async transaction<T>(fn: (tx: never) => Promise<T>) { calls.push('transaction'); return fn(undefined as never); },
      async close() { calls.push('close'); },
    };
    const db = timings.timeStatements(inner);
    expect(await db.run({ name: 'ledger_reserve_one', text: '', commit: 'async' }, [])).toEqual([{ ok: 'ledger_reserve_one' }]);
    await db.run({ name: 'ledger_reserve_one', text: '', commit: 'async' }, []);
    await expect(db.run({ name: 'broken', text: '', commit: 'durable' }, [])).rejects.toThrow('rolled back');
    await db.query('SELECT 1');
    await db.exec('SELECT 2');
    expect(await db.transaction(async () => 7)).toBe(7);
    await db.close();
    expect(calls).toEqual(['SELECT 1', 'SELECT 2', 'transaction', 'close']);
    expect(db.kind).toBe('postgres');
    const h = metrics.STATEMENT_DURATIONS!;
    expect(h.snapshot(['ledger_reserve_one']).count).toBe(2);
    expect(h.snapshot(['ledger_reserve_one']).sum).toBeGreaterThanOrEqual(0.004);
    expect(h.snapshot(['broken']).count).toBe(1);
    expect(await new metrics.GatewayMetrics().render()).toContain('gateway_store_statement_duration_seconds_count{statement="ledger_reserve_one"} 2');
  });
});
