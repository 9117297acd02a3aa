/**
 * A stream on a grant whose replica lost the store: the sweeper settles the stream's recorded
 * checkpoint when the lease passes, the stream goes on and finishes, and the replica posts its final
 * charge late once the store is back. That late post used to be skipped whole (the request already had
 * rows on the grant: the checkpoint), so everything delivered after the checkpoint went unbilled; the
 * grant model test found it (answered and unposted over U). It must post what the final usage owes
 * beyond the settled checkpoint, and a resend of that flush must post nothing more.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DependencyUnavailableError } from '../../../src/errors.js';
import { GrantBook } from '../../../src/ledger/grants/book.js';
import { DEFAULT_GRANTS, type GrantSettings } from '../../../src/ledger/grants/settings.js';
import { DbGrantStore } from '../../../src/ledger/grants/store.js';
import { storedRows } from '../../../src/ledger/holds.js';
import type { UsageRow } from '../../../src/ledger/types.js';
import { Ledger } from '../../../src/ledger/ledger.js';
import { describeStore, openTestDb, storeKind } from '../../helpers/db.js';

const SETTINGS: GrantSettings = { ...DEFAULT_GRANTS, flushMs: 60_000, leaseMs: 1_000, maxUnpostedNano: 1_000_000n };

/** A grant store the test can cut off (a flush then fails before reaching the database). */
class CuttableStore extends DbGrantStore {
  cut = false;
  override async flush(payload: Parameters<DbGrantStore['flush']>[0]): ReturnType<DbGrantStore['flush']> {
    if (this.cut) throw new DependencyUnavailableError('store', 'cut by the test');
    return super.flush(payload);
  }
}

/** The usage rows of a stream: its input and what it delivered. */
function streamRows(accountId: string, requestId: string, outputNano: bigint, phase: string): UsageRow[] {
  return storedRows(accountId, [
    { requestId, model: 'm', kind: 'input_tokens', quantity: 100n, unit: 'token', amountNano: 1_000n, details: { phase } },
    { requestId, model: 'm', kind: 'output_tokens', quantity: outputNano / 10n, unit: 'token', amountNano: outputNano, details: { phase } },
  ]);
}

describeStore(`credit grants: a stream that outlives its swept grant (${storeKind})`, () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  beforeAll(async () => { t = await openTestDb(); });
  afterAll(async () => { await t?.dispose(); });

  it('posts the final charge beyond the settled checkpoint, once', async () => {
    const ledger = new Ledger(t.db);
    const opening = 10_000_000n;
    const { id: accountId } = await ledger.createAccount({ balanceNano: opening });
    let now = 1_000_000;
    const store = new CuttableStore(t.db);
    const book = new GrantBook(store, () => SETTINGS, () => 0, () => now);
    book.wantGrant(accountId, 500_000n);
    await book.flush();

    const draw = book.admit(accountId, 'req_stream', 400_000n);
    if (typeof draw === 'string') throw new Error(`not admitted on the grant: ${draw}`);
    let delivered = 20_000n;
    book.track(draw, {
      snapshot: () => streamRows(accountId, 'req_stream', delivered, 'checkpoint'),
      rows: [], startRecorded: false, chars: 0, recordedChars: 0, snapshotAt: now, startNano: 1_000n, perCharNano: 10n,
    });
    expect(book.delivered(draw, 2_000)).toBeNull();
    await book.flush(); // records the checkpoint: 1,000 input + 20,000 output

    // The store goes away past the lease; the sweeper settles the checkpoint and closes the grant.
    store.cut = true;
    now += 2_000;
    await t.db.query(`UPDATE holds SET expires_at = now() - interval '1 second' WHERE kind = 'grant' AND account_id = $1`, [accountId]);
    expect(await ledger.sweepExpiredHolds()).toBe(1);
    const checkpoint = (await ledger.listUsage(accountId, { limit: 10 })).data;
    expect(checkpoint.reduce((sum, u) => sum + u.amountNano, 0n)).toBe(21_000n);

    // The stream goes on to 150,000 of output, finishes, and the store comes back.
    delivered = 150_000n;
    expect(book.finish(draw, streamRows(accountId, 'req_stream', delivered, 'final'))).toBeNull();
    store.cut = false;
    await book.flush();

    const usage = (await ledger.listUsage(accountId, { limit: 10 })).data;
    expect(usage.reduce((sum, u) => sum + u.amountNano, 0n)).toBe(151_000n);
    const output = usage.filter((u) => u.kind === 'output_tokens');
    expect(output.reduce((sum, u) => sum + u.quantity, 0n)).toBe(15_000n);
    const account = (await ledger.getAccount(accountId))!;
    expect(account.balanceNano).toBe(opening - 151_000n);
    expect(await ledger.listOpenHolds(accountId)).toEqual([]);
  });
});
