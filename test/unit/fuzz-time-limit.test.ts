/**
 * The fuzz properties' time limit (test/helpers/fuzz.ts, fuzzParameters): a property that runs out of
 * time before its case count fails, saying so, instead of fast-check's quiet success; one that finishes
 * in time passes; a real counterexample still gets fast-check's own report.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fuzzParameters } from '../helpers/fuzz.js';

const sleep = (ms: number): Promise<void> => new Promise((ok) => setTimeout(ok, ms));

describe('fuzz time limit', () => {
  it('fails when the time runs out before the case count', async () => {
    let ran = 0;
    const slow = fc.asyncProperty(fc.integer(), async () => { ran++; await sleep(10); });
    const failure = fc.assert(slow, fuzzParameters({ numRuns: 1000, seed: 1, timeLimitMs: 50 }));
    await expect(failure).rejects.toThrow(/the 50 ms time limit ran out before 1000 cases \(only \d+ ran; seed 1\)/);
    expect(ran).toBeGreaterThan(0);
    expect(ran).toBeLessThan(1000);
  });

  it('fast-check alone would have called that a success (what the limit guards against)', async () => {
    const slow = fc.asyncProperty(fc.integer(), async () => { await sleep(10); });
    await expect(fc.assert(slow, { numRuns: 1000, seed: 1, plugins: [fc.interruptAfterTimeLimit(50)] })).resolves.toBeUndefined();
  });

  it('passes when every case runs in time', async () => {
    let ran = 0;
    await fc.assert(fc.asyncProperty(fc.integer(), async () => { ran++; }), fuzzParameters({ numRuns: 20, seed: 1, timeLimitMs: 10_000 }));
    expect(ran).toBe(20);
  });

  it('reports a counterexample as fast-check does, with the error as cause', async () => {
    const failing = fc.asyncProperty(fc.integer({ min: 0, max: 100 }), async (n) => { if (n > 10) throw new Error('too big'); });
    const error = await fc.assert(failing, fuzzParameters({ numRuns: 100, seed: 1, timeLimitMs: 10_000 })).then(() => null, (e: unknown) => e as Error);
    expect(error?.message).toMatch(/Property failed after \d+ tests[\s\S]*Counterexample: \[11\]/);
    expect((error?.cause as Error | undefined)?.message).toBe('too big');
  });
});
