/**
 * A job's hold (spec 4.16; src/pipeline/hold.ts): the poller keeps it alive until the job's deadline
 * plus the usual margin, settles it with what the job produced, or gives it back.
 */
import { describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/ledger/ledger.js';
import type { UsageRowInput } from '../../src/ledger/types.js';
import { keepJobHold, releaseJobHold, settleJobHold } from '../../src/pipeline/hold.js';

/** A ledger that records the hold calls it gets. */
function recordingLedger(): { ledger: Ledger; calls: unknown[][] } {
  const calls: unknown[][] = [];
  const ledger = {
    extendHold: async (...args: unknown[]) => { calls.push(['extend', ...args]); return true; },
    settle: async (input: unknown) => { calls.push(['settle', input]); return []; },
    release: async (holdId: string) => { calls.push(['release', holdId]); },
  } as unknown as Ledger;
  return { ledger, calls };
}

const JOB = { holdId: 'req_job', accountId: 'acct_1', deadlineAt: new Date('2030-01-01T01:00:00Z') };

describe('job holds', () => {
  it('keeps a running job\'s hold until its deadline plus the margin', async () => {
    const { ledger, calls } = recordingLedger();
    expect(await keepJobHold(ledger, JOB, new Date('2030-01-01T00:59:00Z'), 600_000)).toBe(true);
    expect(calls).toEqual([['extend', 'req_job', 60_000 + 600_000]]);
  });

  it('settles a finished job on its account, and releases a failed one', async () => {
    const { ledger, calls } = recordingLedger();
    const row = { requestId: 'req_job', unit: 'second', quantity: 4n, amountNano: 400_000_000n } as UsageRowInput;
    await settleJobHold(ledger, JOB, [row]);
    await releaseJobHold(ledger, JOB);
    expect(calls).toEqual([['settle', { holdId: 'req_job', accountId: 'acct_1', rows: [row] }], ['release', 'req_job']]);
  });
});
