/**
 * A replica's book of credit grants (issue 30): requests are admitted against an account's grant in
 * memory, their charges queued for the flusher (flush.ts), which posts them in batches. What the book
 * guarantees, with U = `max_unposted_usd`:
 *  - covered admission: a request is admitted only while its quote fits the grant's headroom, and
 *    never at or after the lease deadline of the last acknowledged flush;
 *  - bounded exposure: answered but unposted charges plus stream content not yet recorded on the
 *    grant stay within U per account (and `max_unposted_total_usd` per replica); above it an answer
 *    or a stream waits for the flush (back-pressure);
 *  - a failed request writes nothing: its quote is only ever held in memory.
 * Anything that does not fit takes the strict path (the caller's per-request reserve and settle).
 */
import { randomId } from '../ids.js';
import type { UsageRow } from '../types.js';
import { GrantAccount, type Draw, type StreamRecord } from './account.js';
import { applyLine, buildItem, type FlushLine, type FlushPayload } from './flush.js';
import type { GrantSettings } from './settings.js';

export type { Draw, StreamRecord } from './account.js';

/** Why a request took the strict path (the `reason` label of gateway_grant_strict_total). */
export type StrictReason = 'disabled' | 'cold' | 'no_fit' | 'max_draw' | 'lease' | 'low_balance' | 'job' | 'outage';

/** One account's grant in a book: its size, what is admitted against it, what a crash could leave unbilled. */
export interface GrantView {
  grantId: string;
  live: boolean;
  amountNano: bigint;
  /** What admissions count against (smaller while a shrinking flush is in flight). */
  effectiveNano: bigint;
  inflightNano: bigint;
  /** Requests admitted on it and not finished. */
  draws: number;
  unpostedNano: bigint;
  exposureNano: bigint;
  /** No admission at or after this (ms, the book's clock). */
  deadline: number;
  /** A flush of it is sent and not answered. */
  inDoubt: boolean;
}

/** What the book needs of the store. */
export interface GrantStore {
  /** Runs one flush (migration 013); rejects when the store did not answer (the flush may have committed). */
  flush(payload: FlushPayload): Promise<FlushLine[]>;
}

/** What the book reports (metrics, logs); every hook optional. */
export interface BookHooks {
  flushed?(seconds: number, ok: boolean): void;
  backpressure?(): void;
  unposted?(totalNano: bigint): void;
}

/** How long an account stays strict after a reclaim or a refused open. */
const STRICT_PAUSE_MS = 2_000;

/** The grant book of one replica. */
export class GrantBook {
  /** This replica's id on its grants (reclaim requests skip their owner's). */
  readonly owner = randomId('gwr_');
  private readonly accounts = new Map<string, GrantAccount>();
  private flushing: Promise<void> | null = null;
  private again = false;
  private soon = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  /** The last flush failed: the store is taken as unreachable until one succeeds. */
  storeDown = false;
  /** Exposure (unposted + unrecorded) over every account, kept as the parts change. */
  private exposure = 0n;

  constructor(
    private readonly store: GrantStore,
    private readonly settings: () => GrantSettings,
    private readonly checkpointMs: () => number,
    readonly now: () => number = Date.now,
    private readonly hooks: BookHooks = {},
  ) {}

  /** Starts the flusher's timer; each interval reads `flush_ms` afresh, so a config reload changes it. */
  start(): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush();
      this.start();
    }, this.settings().flushMs);
    this.timer.unref();
  }

  /** Admits a request against its account's grant, or says why it takes the strict path. */
  admit(accountId: string, requestId: string, quoteNano: bigint): Draw | StrictReason {
    const s = this.settings();
    if (!s.enabled) return 'disabled';
    if (quoteNano > s.maxDrawNano) return 'max_draw';
    if (this.storeDown && s.onStoreOutage === 'stop') return 'outage';
    const acc = this.accounts.get(accountId);
    if (!acc) return 'cold';
    const now = this.now();
    acc.lastUsed = now;
    if (quoteNano > acc.largestQuoteNano) acc.largestQuoteNano = quoteNano;
    if (now < acc.strictUntil) return 'low_balance';
    if (!acc.live || acc.closing) return 'cold';
    if (now >= acc.deadline) return 'lease';
    if (quoteNano > acc.headroomNano()) {
      acc.missedNano += quoteNano;
      return 'no_fit';
    }
    acc.inflightNano += quoteNano;
    acc.draws += 1;
    return { requestId, accountId, quoteNano, done: false, stream: null };
  }

  /** A request that took the strict path for want of a grant: the next flush opens one (or grows it). */
  wantGrant(accountId: string, quoteNano: bigint): void {
    const s = this.settings();
    if (!s.enabled || quoteNano > s.maxDrawNano) return;
    let acc = this.accounts.get(accountId);
    if (!acc) {
      acc = new GrantAccount(accountId, randomId('grant_'), this.now());
      this.accounts.set(accountId, acc);
    }
    if (quoteNano > acc.largestQuoteNano) acc.largestQuoteNano = quoteNano;
  }

  /**
   * A finished request's charge (its rows, already priced): queued for the flusher. Null when the
   * answer may go at once; otherwise a promise the answer waits for, settled by the flush that posts
   * it (post: immediate, or over U). It rejects when the charge could not be posted (the grant was
   * swept while the store was away and the balance no longer covers it).
   */
  finish(draw: Draw, rows: UsageRow[]): Promise<void> | null {
    if (draw.done) return null;
    const acc = this.release(draw);
    const charge = rows.reduce((sum, r) => sum + r.amountNano, 0n);
    acc.unpostedNano += charge;
    this.exposure += charge;
    const s = this.settings();
    const over = acc.exposureNano() > s.maxUnpostedNano || this.exposure > s.maxUnpostedTotalNano;
    if (s.post !== 'immediate' && !over) {
      acc.rows.push(...rows);
      return null;
    }
    if (over && s.post !== 'immediate') this.hooks.backpressure?.();
    return new Promise<void>((resolve, reject) => {
      acc.waiting.push({ rows, resolve, reject });
      this.flushSoon();
    });
  }

  /** A request that failed or charges nothing: its quote is given back in memory, nothing written. */
  release(draw: Draw): GrantAccount {
    const acc = this.accounts.get(draw.accountId)!;
    if (draw.done) return acc;
    draw.done = true;
    acc.inflightNano -= draw.quoteNano;
    acc.draws -= 1;
    if (draw.stream) this.untrack(acc, draw);
    return acc;
  }

  /** A stream admitted on a grant: its delivered usage is recorded by the flusher from now on. */
  track(draw: Draw, record: StreamRecord): void {
    draw.stream = record;
    const acc = this.accounts.get(draw.accountId)!;
    acc.streams.add(draw);
    acc.unrecordedNano += record.startNano;
    this.exposure += record.startNano;
  }

  /**
   * The stream has delivered `chars` characters so far. Null when it may go on; a promise to wait for
   * when the account's exposure is over U (the flush then records it).
   */
  delivered(draw: Draw, chars: number): Promise<void> | null {
    const s = draw.stream!;
    const acc = this.accounts.get(draw.accountId)!;
    if (chars > s.chars) {
      const grown = BigInt(chars - s.chars) * s.perCharNano;
      acc.unrecordedNano += grown;
      this.exposure += grown;
      s.chars = chars;
    }
    const settings = this.settings();
    if (acc.exposureNano() <= settings.maxUnpostedNano && this.exposure <= settings.maxUnpostedTotalNano) return null;
    this.hooks.backpressure?.();
    acc.recordNow = true;
    return new Promise<void>((resolve, reject) => {
      acc.flushWaiters.push({ resolve, reject });
      this.flushSoon();
    });
  }

  /** Gives this replica's headroom for the account back (before a 402): resolves once the store has it. */
  async giveBack(accountId: string): Promise<boolean> {
    const acc = this.accounts.get(accountId);
    if (!acc?.live || acc.headroomNano() <= 0n) return false;
    acc.strictUntil = this.now() + STRICT_PAUSE_MS;
    await new Promise<void>((resolve, reject) => { acc.flushWaiters.push({ resolve, reject }); this.flushSoon(); });
    return true;
  }

  /** Another replica asked for this account's headroom (NOTIFY or a flush's answer): given back at once. */
  reclaimRequested(accountId: string): void {
    const acc = this.accounts.get(accountId);
    if (!acc) return;
    acc.strictUntil = this.now() + STRICT_PAUSE_MS;
    this.flushSoon();
  }

  /** One account's grant as this book sees it (for tests, logs and the admin view), or null when it has none. */
  grantOf(accountId: string): GrantView | null {
    const acc = this.accounts.get(accountId);
    if (!acc) return null;
    return {
      grantId: acc.grantId, live: acc.live, amountNano: acc.amountNano, effectiveNano: acc.effectiveNano(), inflightNano: acc.inflightNano, draws: acc.draws,
      unpostedNano: acc.unpostedNano, exposureNano: acc.exposureNano(), deadline: acc.deadline, inDoubt: acc.sent !== null,
    };
  }

  /** Unposted charges and unrecorded stream content over every account (gateway_grant_unposted_usd). */
  unpostedNano(): bigint {
    return this.exposure;
  }

  /** Runs a flush now (or right after the one in flight). */
  flushSoon(): void {
    if (this.soon) return;
    this.soon = true;
    setImmediate(() => { this.soon = false; void this.flush(); });
  }

  /** One flush of every grant with something to say; one in flight at a time. */
  flush(): Promise<void> {
    if (this.flushing) {
      this.again = true;
      return this.flushing;
    }
    this.flushing = this.flushOnce().finally(() => {
      this.flushing = null;
      if (this.again) { this.again = false; this.flushSoon(); }
    });
    return this.flushing;
  }

  /** Flushes until every charge answered so far is posted (or the store fails); grants stay. */
  async flushAll(): Promise<void> {
    for (let round = 0; round < 100; round++) {
      const pending = [...this.accounts.values()].some((a) => a.sent || a.rows.length > 0 || a.waiting.length > 0);
      if (!pending) return;
      await this.flush();
      if (this.storeDown) return;
    }
  }

  /** Posts everything and gives every grant back (a graceful stop); the timer stops. */
  async close(deadlineMs = 5_000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // Real time: the book's own clock may be a test's, standing still.
    const until = performance.now() + deadlineMs;
    for (const acc of this.accounts.values()) acc.closing = true;
    while (this.accounts.size > 0 && performance.now() < until) {
      await this.flush();
      if (this.storeDown) break;
      // A pause between rounds: a flush with nothing to send resolves at once, and a loop of those
      // would starve the event loop (the requests in flight could not finish).
      if (this.accounts.size > 0) await new Promise((r) => setTimeout(r, 20));
    }
  }

  private untrack(acc: GrantAccount, draw: Draw): void {
    acc.streams.delete(draw);
    const left = GrantAccount.unrecordedOf(draw.stream!);
    acc.unrecordedNano -= left;
    this.exposure -= left;
  }

  private async flushOnce(): Promise<void> {
    const s = this.settings();
    const now = this.now();
    const sent: GrantAccount[] = [];
    const items = [];
    for (const acc of this.accounts.values()) {
      // An account with no grant in the store and nothing in flight is forgotten (cold again).
      if (!acc.sent && !acc.live && !acc.busy() && (acc.dead || acc.closing)) { this.accounts.delete(acc.accountId); continue; }
      const item = buildItem(acc, s, now, this.checkpointMs());
      if (item) { items.push(item); sent.push(acc); }
    }
    if (items.length === 0) return;
    const payload: FlushPayload = {
      owner: this.owner, lease_ms: s.leaseMs, fraction: (Math.round(s.balanceFraction * 1e6) / 1e6).toString(),
      commit: s.post === 'immediate' ? 'async' : 'durable', items,
    };
    const started = performance.now();
    let lines: FlushLine[];
    try {
      lines = await this.store.flush(payload);
    } catch {
      // In doubt: each item is sent again, unchanged, at the next flush (its sequence number makes it once).
      this.storeDown = true;
      this.hooks.flushed?.((performance.now() - started) / 1000, false);
      return;
    }
    this.storeDown = false;
    this.hooks.flushed?.((performance.now() - started) / 1000, true);
    const byGrant = new Map(lines.map((l) => [l.grant_id, l]));
    for (const acc of sent) {
      const line = byGrant.get(acc.grantId);
      if (!line) continue;
      const effect = applyLine(acc, line, this.now(), STRICT_PAUSE_MS);
      this.exposure -= effect.exposureFreedNano;
      if (effect.forget) this.accounts.delete(acc.accountId);
    }
    this.hooks.unposted?.(this.exposure);
  }
}
