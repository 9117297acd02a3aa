/**
 * The credit grants' metrics (issue 30, "Names"): what a crash of this replica could leave unbilled,
 * how long flushes take, how often answers wait for one, why requests took the strict path, and how
 * reclaims before a 402 ended.
 */
import { Counter, Gauge, Histogram, STAGE_BUCKETS_SECONDS, type Registry } from './metrics.js';

/** The strict path's reasons (src/ledger/grants/book.ts StrictReason). */
const STRICT_REASONS = ['disabled', 'cold', 'no_fit', 'max_draw', 'lease', 'low_balance', 'job', 'outage'];

/** How a reclaim ended: the reserve tried once more fitted, or did not (the 402). */
const RECLAIM_OUTCOMES = ['reclaimed', 'refused'];

/** The grant metrics of one registry. */
export class GrantMetrics {
  readonly unposted: Gauge;
  readonly flushDuration: Histogram;
  readonly backpressure: Counter;
  readonly strict: Counter;
  readonly reclaims: Counter;

  constructor(r: Registry) {
    this.unposted = r.register(new Gauge('gateway_grant_unposted_usd', 'Charges answered but not yet posted, plus stream content delivered since its last recorded checkpoint, over every account of this replica, in USD (what a crash could leave unbilled).'));
    this.flushDuration = r.register(new Histogram('gateway_grant_flush_duration_seconds', 'Time per grant flush (posting charges, renewing and resizing grants), by result (ok, error), in seconds.', ['result'], STAGE_BUCKETS_SECONDS));
    this.backpressure = r.register(new Counter('gateway_grant_backpressure_total', 'Answers and stream pieces that waited for a flush because max_unposted_usd (or the replica total) was reached.'));
    this.strict = r.register(new Counter('gateway_grant_strict_total', 'Requests that took the strict path (their own reserve and settle), by reason.', ['reason']));
    this.reclaims = r.register(new Counter('gateway_grant_reclaim_total', 'Reclaims of other replicas\' grants before a 402, by outcome.', ['outcome']));
    for (const reason of STRICT_REASONS) this.strict.init([reason]);
    for (const outcome of RECLAIM_OUTCOMES) this.reclaims.init([outcome]);
    this.backpressure.init([]);
    this.unposted.set([], 0);
  }

  /** The replica's unposted exposure, in nano-USD. */
  setUnposted(nano: bigint): void {
    this.unposted.set([], Number(nano) / 1e9);
  }
}
