/**
 * The admin usage listing shows each row's `deployment` (issue 29 item 7): the deployment that served
 * it, null for a row none served; a refund, answered and listed, has its row's.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeStore } from '../helpers/db.js';
import { startAdmin, type AdminHarness } from './harness.js';

describeStore('admin usage rows carry deployment', () => {
  let h: AdminHarness;
  beforeAll(async () => { h = await startAdmin(); });
  afterAll(async () => { await h?.close(); });

  it('lists deployment on every row and keeps it on a refund', async () => {
    const { id: accountId } = await h.ledger.createAccount({ balanceNano: 1_000_000_000n });
    const holdId = `hold_admin_dep_${process.pid}`;
    expect(await h.ledger.reserve({ holdId, accountId, amountNano: 1_000_000n, ttlMs: 60_000 })).toBe(true);
    const line = (requestId: string, deployment?: string) =>
      ({ requestId, model: 'gpt-4o', kind: 'tokens', quantity: 5n, unit: 'token', amountNano: 1_000n, details: {}, deployment });
    const [served, plain] = await h.ledger.settle({ holdId, accountId, rows: [line('req_served', 'openai/gpt-4o'), line('req_plain')] });

    const refund = await h.call('POST', `/admin/usage/${served!.id}/refund`);
    expect(refund.status).toBe(201);
    expect(refund.json).toMatchObject({ refund_of: served!.id, deployment: 'openai/gpt-4o' });

    const listing = await h.call('GET', `/admin/accounts/${accountId}/usage`);
    expect(listing.status).toBe(200);
    const rows = listing.json.data as Array<{ id: string; deployment: string | null; key_id: string | null }>;
    expect(rows.map((r) => [r.id, r.deployment])).toEqual([
      [refund.json.id, 'openai/gpt-4o'], [plain!.id, null], [served!.id, 'openai/gpt-4o'],
    ]);
    // Present (as null), not omitted, on a row no deployment served; next to key_id.
    const plainJson = rows.find((r) => r.id === plain!.id)!;
    expect(Object.keys(plainJson).slice(0, 3)).toEqual(['id', 'key_id', 'deployment']);
  });
});
