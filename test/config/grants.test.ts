import { describe, expect, it } from 'vitest';
import { compileGrants } from '../../src/config/grants.js';
import { DEFAULT_GRANTS } from '../../src/ledger/grants/settings.js';

describe('billing.grants (issue 30)', () => {
  it('takes the issue\'s defaults, max_draw_usd half of max_grant_usd', () => {
    expect(compileGrants(undefined)).toEqual(DEFAULT_GRANTS);
    expect(compileGrants({ max_grant_usd: '2' }).maxDrawNano).toBe(1_000_000_000n);
    expect(compileGrants({ max_grant_usd: '2', max_draw_usd: '0.5' }).maxDrawNano).toBe(500_000_000n);
  });

  it('reads each key, amounts exactly', () => {
    const s = compileGrants({
      enabled: false, post: 'immediate', flush_ms: 50, lease_seconds: 3, max_unposted_usd: '0.000000001', max_unposted_total_usd: '1',
      balance_fraction: 0.5, idle_return_seconds: 2, reclaim_wait_ms: 0, on_store_outage: 'stop',
    });
    expect(s).toMatchObject({ enabled: false, post: 'immediate', flushMs: 50, leaseMs: 3000, maxUnpostedNano: 1n, maxUnpostedTotalNano: 1_000_000_000n, balanceFraction: 0.5, idleReturnMs: 2000, reclaimWaitMs: 0, onStoreOutage: 'stop' });
  });

  it('GATEWAY_GRANTS_POST overrides post; anything else is refused', () => {
    expect(compileGrants({ post: 'deferred' }, { GATEWAY_GRANTS_POST: 'immediate' }).post).toBe('immediate');
    expect(compileGrants({ post: 'immediate' }, { GATEWAY_GRANTS_POST: '' }).post).toBe('immediate');
    expect(() => compileGrants(undefined, { GATEWAY_GRANTS_POST: 'later' })).toThrow(/GATEWAY_GRANTS_POST.*deferred or immediate/);
  });
});
