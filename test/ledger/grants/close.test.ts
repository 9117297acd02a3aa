/**
 * A graceful stop closes every grant in the store, including one a reclaim emptied: that one used to
 * stay open (live, holding nothing) until its next renewal (a third of the lease, 5 s), the stop
 * spinning on it meanwhile; a stop with a shorter deadline left it open for the sweeper.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { GrantBook } from '../../../src/ledger/grants/book.js';
import { DEFAULT_GRANTS, type GrantSettings } from '../../../src/ledger/grants/settings.js';
import { DbGrantStore } from '../../../src/ledger/grants/store.js';
import { Ledger } from '../../../src/ledger/ledger.js';
import { describeStore, openTestDb, storeKind } from '../../helpers/db.js';

const SETTINGS: GrantSettings = { ...DEFAULT_GRANTS, flushMs: 60_000 };

describeStore(`credit grants: a graceful stop (${storeKind})`, () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  beforeAll(async () => { t = await openTestDb(); });
  afterAll(async () => { await t?.dispose(); });

  it('closes a grant whose headroom was all given back, and leaves no open hold', async () => {
    const ledger = new Ledger(t.db);
    const { id: accountId } = await ledger.createAccount({ balanceNano: 1_000_000_000n });
    const book = new GrantBook(new DbGrantStore(t.db), () => SETTINGS, () => 1000);
    book.wantGrant(accountId, 10_000_000n);
    await book.flush();
    expect(await ledger.listOpenHolds(accountId)).toMatchObject([{ kind: 'grant' }]);
    expect(await book.giveBack(accountId)).toBe(true);
    expect(book.grantOf(accountId)).toMatchObject({ live: true, amountNano: 0n });

    // Shorter than a third of the lease: the close must not wait for a renewal.
    await book.close(2_000);

    expect(await ledger.listOpenHolds(accountId)).toEqual([]);
    expect(book.grantOf(accountId)).toBeNull();
    expect((await ledger.getAccount(accountId))!.balanceNano).toBe(1_000_000_000n);
  });
});
