/**
 * Credit grants of one replica (issue 30): the book, its store, its metrics, and the reclaim a replica
 * runs before it answers 402 (its own headroom given back, the other replicas asked for theirs, a
 * wait of at most `reclaim_wait_ms`, then one more try of the strict reserve by the caller).
 */
import type { Db } from '../../store/types.js';
import type { GrantMetrics } from '../../observability/grant-metrics.js';
import { GrantBook, type StrictReason } from './book.js';
import type { GrantSettings } from './settings.js';
import { RECLAIM_CHANNEL } from './statements.js';
import { DbGrantStore } from './store.js';
import type { ReclaimBus } from './redis-bus.js';

export { GrantBook, type Draw, type StrictReason } from './book.js';
export { GrantLapsedError } from './flush.js';

/** How often a reclaim looks whether the others have given back. */
const RECLAIM_POLL_MS = 10;

/** The grants of one gateway process. */
export class Grants {
  readonly book: GrantBook;
  private readonly store: DbGrantStore;
  private unlisten: (() => Promise<void>) | null = null;

  /** `bus`: reclaim requests over Redis too (REDIS_URL), beside PostgreSQL's NOTIFY. */
  constructor(
    private readonly db: Db, private readonly settings: () => GrantSettings, checkpointMs: () => number,
    private readonly metrics?: GrantMetrics, private readonly bus?: ReclaimBus,
  ) {
    this.store = new DbGrantStore(db);
    this.book = new GrantBook(this.store, settings, checkpointMs, Date.now, {
      flushed: (seconds, ok) => metrics?.flushDuration.observe([ok ? 'ok' : 'error'], seconds),
      backpressure: () => metrics?.backpressure.inc(),
      unposted: (nano) => metrics?.setUnposted(nano),
    });
  }

  /** Starts the flusher and, on a shared PostgreSQL, listens for the other replicas' reclaim requests. */
  async start(): Promise<void> {
    this.book.start();
    if (this.db.listen) this.unlisten = await this.db.listen(RECLAIM_CHANNEL, (accountId) => this.book.reclaimRequested(accountId));
    await this.bus?.subscribe((accountId) => this.book.reclaimRequested(accountId));
  }

  /** Counts a request that took the strict path, and asks for a grant when one would have served it. */
  strict(reason: StrictReason, accountId: string, quoteNano: bigint): void {
    this.metrics?.strict.inc([reason]);
    if (reason === 'cold' || reason === 'no_fit') this.book.wantGrant(accountId, quoteNano);
  }

  /**
   * Before a 402: gives this replica's headroom back and asks the others for theirs, waiting up to
   * `reclaim_wait_ms` for them to answer. The caller then tries once more, whatever came back: a
   * grant given back to another request's reclaim a moment ago is in the balance too.
   */
  async reclaim(accountId: string): Promise<void> {
    await this.book.giveBack(accountId).catch(() => false);
    const flagged = await this.store.askOthers(accountId, this.book.owner);
    if (flagged === 0) return;
    await this.bus?.publish(accountId);
    const until = Date.now() + this.settings().reclaimWaitMs;
    while (Date.now() < until && await this.store.othersPending(accountId, this.book.owner)) {
      await new Promise((resolve) => setTimeout(resolve, RECLAIM_POLL_MS));
    }
  }

  /** How a reclaim's second try ended. */
  reclaimed(fitted: boolean): void {
    this.metrics?.reclaims.inc([fitted ? 'reclaimed' : 'refused']);
  }

  /** Posts what is left, gives every grant back, stops listening. */
  async close(deadlineMs?: number): Promise<void> {
    await this.unlisten?.().catch(() => undefined);
    await this.bus?.close();
    await this.book.close(deadlineMs);
  }
}
