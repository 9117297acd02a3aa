/**
 * Model-based test of credit grants (issue 30): three grant books on one store, with an injected
 * clock, driven by random steps (admit, finish, fail, stream tick, flush, lose a flush's answer,
 * crash a book, cut the store, advance time, sweep, top up, refund). After every step: covered
 * admission, charge <= quote, conservation, each posting once, failures free, no admission after a
 * lease deadline, and the bound U on what a crash or a late post may cost.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DependencyUnavailableError } from '../../../src/errors.js';
import { GrantBook, type Draw } from '../../../src/ledger/grants/book.js';
import { DEFAULT_GRANTS, type GrantSettings } from '../../../src/ledger/grants/settings.js';
import { DbGrantStore } from '../../../src/ledger/grants/store.js';
import { storedRows } from '../../../src/ledger/holds.js';
import { Ledger } from '../../../src/ledger/ledger.js';
import { describeStore, openTestDb, storeKind } from '../../helpers/db.js';
import { GRANT_STEPS, type Step } from './steps.js';

const U = 10_000n;
/**
 * The run's seed: random unless GATEWAY_MODEL_SEED names one (fast-check prints the seed of a failure,
 * to replay it). GATEWAY_MODEL_REPLAY names a JSON file of steps (a printed counterexample) to run
 * again GATEWAY_MODEL_REPLAY_TIMES times (20).
 */
const SEED: { seed?: number } = process.env.GATEWAY_MODEL_SEED ? { seed: Number(process.env.GATEWAY_MODEL_SEED) } : {};
const REPLAY = process.env.GATEWAY_MODEL_REPLAY;
/** Runs of the property (each on a fresh account); the coverage floors below scale with it. */
const RUNS = storeKind === 'pglite' ? 30 : 15;
const SETTINGS: GrantSettings = {
  ...DEFAULT_GRANTS, flushMs: 100, leaseMs: 1_000, maxUnpostedNano: U, maxUnpostedTotalNano: 3n * U,
  maxGrantNano: 100_000n, maxDrawNano: 40_000n, balanceFraction: 0.5, idleReturnMs: 5_000,
};

/** A store wrapper whose next flush can be cut (nothing applied) or answered never (applied, answer lost). */
class FaultyStore extends DbGrantStore {
  mode: 'ok' | 'cut' | 'lose' = 'ok';
  /** Flushes a cut fails before the store is back. */
  cutFor = 0;
  readonly statuses: Record<string, number> = {};
  override async flush(payload: Parameters<DbGrantStore['flush']>[0]): ReturnType<DbGrantStore['flush']> {
    if (this.mode === 'cut') {
      if (--this.cutFor <= 0) this.mode = 'ok';
      throw new DependencyUnavailableError('store', 'cut by the test');
    }
    const lines = await super.flush(payload);
    for (const l of lines) this.statuses[l.status] = (this.statuses[l.status] ?? 0) + 1;
    if (this.mode === 'lose') { this.mode = 'ok'; throw new DependencyUnavailableError('store', 'answer lost'); }
    return lines;
  }
}

interface Request { draw: Draw; book: number; quote: bigint; charge: bigint; answered: boolean; failed: boolean; stream: boolean; delivered: bigint }

describeStore(`credit grants, model-based (${storeKind})`, () => {
  let t: Awaited<ReturnType<typeof openTestDb>>;
  let ledger: Ledger;
  beforeAll(async () => { t = await openTestDb(); ledger = new Ledger(t.db); });
  afterAll(() => t?.dispose());

  /** What the runs exercised: a model test that never admits on a grant, waits or sweeps proves nothing. */
  const seen = { draws: 0, strict: 0, waited: 0, swept: 0 };
  const seenStatus: Record<string, number> = {};

  it.runIf(REPLAY)('replays the steps of GATEWAY_MODEL_REPLAY', async () => {
    const steps = JSON.parse(readFileSync(REPLAY!, 'utf8')) as Step[];
    for (let i = 0; i < Number(process.env.GATEWAY_MODEL_REPLAY_TIMES ?? 20); i++) await runSteps(steps);
  }, 600_000);

  it.skipIf(REPLAY)('keeps every invariant over random steps', async () => {
    // Random seeds: a round that exercised too little (no sweep, no wait) is followed by another, up
    // to four; every round's runs are checked all the same. A named seed runs one round.
    const covered = () => seen.draws > RUNS * 2 && seen.strict > 0 && seen.waited > 0 && seen.swept > 0;
    for (let round = 0; round < (SEED.seed === undefined ? 4 : 1) && !covered(); round++) {
      await fc.assert(fc.asyncProperty(fc.array(GRANT_STEPS, { minLength: 20, maxLength: 120 }), async (steps) => {
        await runSteps(steps);
      }), { numRuns: RUNS, ...SEED });
    }
    // What the runs must have exercised (a run has at least 20 steps, admissions weigh 8 of 37).
    expect(seen.draws).toBeGreaterThan(RUNS * 2);
    expect(seen.strict).toBeGreaterThan(0);
    expect(seen.waited).toBeGreaterThan(0);
    expect(seen.swept).toBeGreaterThan(0);
  }, 600_000);

  async function runSteps(steps: Step[]): Promise<void> {
    const opening = 300_000n;
    const { id: accountId } = await ledger.createAccount({ balanceNano: opening, creditLimitNano: 100_000n });
    let now = 1_000_000;
    const stores = [0, 1, 2].map(() => new FaultyStore(t.db));
    const books = stores.map((store) => new GrantBook(store, () => SETTINGS, () => 300, () => now));
    const crashed = new Set<number>();
    const requests: Request[] = [];
    let topups = 0n;
    let serial = 0;
    // Every book starts warm: it asked for a grant once, and flushed.
    for (const book of books) { book.wantGrant(accountId, 20_000n); await book.flush(); }
    for (const step of steps) {
      const b = step.book % 3;
      const book = books[b]!;
      const open = requests.filter((r) => r.book === b && !r.draw.done);
      const pick = open.length > 0 ? open[step.n % open.length] : undefined;
      if (crashed.has(b) && !['advance', 'sweep', 'topup', 'refund'].includes(step.kind)) continue;
      switch (step.kind) {
        case 'admit': {
          const quote = BigInt(step.amount);
          const view = book.grantOf(accountId);
          const admitted = book.admit(accountId, `req_${serial++}`, quote);
          if (typeof admitted === 'string') { book.wantGrant(accountId, quote); seen.strict += 1; break; }
          seen.draws += 1;
          // Covered admission, and never at or after the lease deadline.
          expect(view!.live).toBe(true);
          expect(now).toBeLessThan(view!.deadline);
          expect(quote).toBeLessThanOrEqual(view!.effectiveNano - view!.inflightNano - view!.unpostedNano);
          const stream = step.n % 2 === 0;
          const r: Request = { draw: admitted, book: b, quote, charge: 0n, answered: false, failed: false, stream, delivered: 0n };
          requests.push(r);
          if (stream) {
            book.track(admitted, {
              snapshot: () => (r.delivered > 0n ? storedRows(accountId, [row(admitted.requestId, r.delivered, 'checkpoint')]) : null),
              rows: [], startRecorded: false, chars: 0, recordedChars: 0, snapshotAt: now, startNano: 0n, perCharNano: 10n,
            });
          }
          break;
        }
        case 'tick': {
          if (!pick?.stream) break;
          const chars = Number(pick.delivered / 10n) + step.amount % 500;
          pick.delivered = BigInt(chars) * 10n > pick.quote ? pick.quote : BigInt(chars) * 10n;
          const wait = book.delivered(pick.draw, Number(pick.delivered / 10n));
          if (wait) await Promise.race([wait, book.flush()]).catch(() => undefined);
          break;
        }
        case 'finish': {
          if (!pick) break;
          const charge = pick.stream ? pick.delivered + (pick.quote - pick.delivered) * BigInt(step.amount % 2) / 2n : (pick.quote * BigInt(step.amount % 101)) / 100n;
          pick.charge = charge;
          expect(charge).toBeLessThanOrEqual(pick.quote);
          const waiting = book.finish(pick.draw, storedRows(accountId, [row(pick.draw.requestId, charge, 'final')]));
          if (!waiting) pick.answered = true;
          else { seen.waited += 1; void waiting.then(() => { pick.answered = true; }, () => { pick.failed = true; }); }
          break;
        }
        case 'fail': if (pick) { book.release(pick.draw); pick.failed = true; } break;
        case 'flush': stores[b]!.mode = 'ok'; await book.flush(); break;
        case 'lose': stores[b]!.mode = 'lose'; await book.flush(); break;
        case 'cut': stores[b]!.mode = 'cut'; stores[b]!.cutFor = 1 + (step.n % 30); break;
        case 'crash': crashed.add(b); break;
        case 'advance': {
          // Time passing is the books' flush timers firing (a cut book's flush fails).
          now += step.amount;
          for (const [i, other] of books.entries()) if (!crashed.has(i)) await other.flush();
          break;
        }
        case 'sweep': {
          // The store's clock is not the books': grants whose lease passed on the books' clock are aged in the store.
          for (const [i, other] of books.entries()) {
            const view = other.grantOf(accountId);
            if (view && (crashed.has(i) || stores[i]!.mode === 'cut') && now >= view.deadline) {
              await t.db.query(`UPDATE holds SET expires_at = now() - interval '1 second' WHERE id = $1 AND closed_at IS NULL`, [view.grantId]);
            }
          }
          seen.swept += await ledger.sweepExpiredHolds();
          break;
        }
        case 'topup': await ledger.topUp(accountId, BigInt(step.amount) * 100n); topups += BigInt(step.amount) * 100n; break;
        case 'refund': {
          const rows = (await ledger.listUsage(accountId, { limit: 500 })).data.filter((u) => u.kind !== 'refund');
          const target = rows[step.n % Math.max(1, rows.length)];
          if (target) await ledger.refund(target.id).catch(() => undefined);
          break;
        }
      }
      await checkInvariants(accountId, opening, topups, requests, books, crashed);
    }
    for (const store of stores) for (const [k, v] of Object.entries(store.statuses)) seenStatus[k] = (seenStatus[k] ?? 0) + v;
    for (const r of requests) if (!r.draw.done && !crashed.has(r.book)) books[r.book]!.release(r.draw);
    for (const [i, book] of books.entries()) if (!crashed.has(i)) { stores[i]!.mode = 'ok'; await book.close(1_000); }
    await checkInvariants(accountId, opening, topups, requests, books, crashed);
  }

  async function grantOpen(grantId: string): Promise<boolean> {
    return (await t.db.query('SELECT 1 FROM holds WHERE id = $1 AND closed_at IS NULL', [grantId])).length > 0;
  }

  async function checkInvariants(accountId: string, opening: bigint, topups: bigint, requests: Request[], books: GrantBook[], crashed: Set<number>): Promise<void> {
    // Which answers had gone out, taken before the store is read: an answer that waited for its post
    // may go out while the checks below await the store, after the usage was read (that race, not the
    // books, was what failed now and then on PostgreSQL).
    const answered = new Set(requests.filter((r) => r.answered));
    // Conservation, for this run's account only (the whole reconciliation grows with every run's rows).
    const [books_] = await t.db.query<{ opening: string; topups: string; balance: string; usage: string; held: string }>(CONSERVATION, [accountId]);
    expect(BigInt(books_!.opening) + BigInt(books_!.topups)).toBe(opening + topups);
    expect(BigInt(books_!.opening) + BigInt(books_!.topups) - BigInt(books_!.balance)).toBe(BigInt(books_!.usage) + BigInt(books_!.held));
    const usage = (await ledger.listUsage(accountId, { limit: 500 })).data;
    const byRequest = new Map<string, bigint>();
    for (const u of usage) if (u.kind !== 'refund') byRequest.set(u.requestId, (byRequest.get(u.requestId) ?? 0n) + u.amountNano);
    for (const r of requests) {
      const charged = byRequest.get(r.draw.requestId) ?? 0n;
      // Each posting once, never above the quote; a failed request is free.
      expect(charged).toBeLessThanOrEqual(r.quote);
      if (r.failed && !r.answered && r.charge === 0n) expect(charged).toBe(0n);
      if (answered.has(r) && !crashed.has(r.book)) expect([0n, r.charge]).toContain(charged);
    }
    // The bound U: what a crashed book answered and never posted, once the sweeper closed its grant
    // (settling the streams' recorded checkpoints); a live book's answered and unposted charges.
    for (const [i, book] of books.entries()) {
      const view = book.grantOf(accountId);
      const lost = requests.filter((r) => r.book === i && answered.has(r)).reduce((sum, r) => sum + r.charge - (byRequest.get(r.draw.requestId) ?? 0n), 0n);
      if (!crashed.has(i) || !view || !(await grantOpen(view.grantId))) expect(lost).toBeLessThanOrEqual(U);
    }
    // No overspend beyond the credit limit, except late posts by at most U each.
    const account = (await ledger.getAccount(accountId))!;
    expect(account.balanceNano).toBeGreaterThanOrEqual(-account.creditLimitNano - U * 3n);
  }
});

/** One account's books: opening + topups - balance must equal usage (net of refunds) + open holds. */
const CONSERVATION = `SELECT a.opening_nano::text AS opening, a.balance_nano::text AS balance,
  (SELECT coalesce(sum(amount_nano), 0) FROM topups WHERE account_id = a.id)::text AS topups,
  (SELECT coalesce(sum(amount_nano), 0) FROM usage_rows WHERE account_id = a.id)::text AS usage,
  (SELECT coalesce(sum(amount_nano), 0) FROM holds WHERE account_id = a.id AND closed_at IS NULL)::text AS held
FROM accounts a WHERE a.id = $1`;

function row(requestId: string, amountNano: bigint, phase: string) {
  return { requestId, model: 'm', kind: 'tokens', quantity: amountNano, unit: 'token', amountNano, details: { phase } };
}
