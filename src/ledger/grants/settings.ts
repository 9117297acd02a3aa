/**
 * `billing.grants` of gateway.config.yaml, compiled (issue 30, "Names"): how a replica takes credit
 * grants for accounts and posts the charges admitted against them. Money in nano-USD.
 */

/** The compiled grant settings. */
export interface GrantSettings {
  /** Off: every request takes the strict path (a reserve and a settle of its own). */
  enabled: boolean;
  /** `deferred`: charges posted by the flusher behind the answer; `immediate`: an asynchronous-commit post before it. */
  post: 'deferred' | 'immediate';
  /** How often the flusher posts (and renews, resizes, records streams). */
  flushMs: number;
  /** A grant's lease: renewed by every flush; the sweeper closes a grant not renewed for this long. */
  leaseMs: number;
  /** U: answered but unposted charges plus undelivered-checkpoint stream content, per account per replica. */
  maxUnpostedNano: bigint;
  /** The same bound over every account of the replica. */
  maxUnpostedTotalNano: bigint;
  /** The largest grant a replica holds for one account. */
  maxGrantNano: bigint;
  /** A grant is at most this fraction of what the account has available. */
  balanceFraction: number;
  /** A quote above this takes the strict path. */
  maxDrawNano: bigint;
  /** A grant with no request for this long is given back. */
  idleReturnMs: number;
  /** How long a replica about to answer 402 waits for the others to give grants back. */
  reclaimWaitMs: number;
  /** While the store is unreachable: keep admitting from headroom (`continue`) or take the strict path (`stop`). */
  onStoreOutage: 'continue' | 'stop';
}

/** The defaults of issue 30. */
export const DEFAULT_GRANTS: GrantSettings = {
  enabled: true,
  post: 'deferred',
  flushMs: 100,
  leaseMs: 15_000,
  maxUnpostedNano: 250_000_000n,
  maxUnpostedTotalNano: 5_000_000_000n,
  maxGrantNano: 5_000_000_000n,
  balanceFraction: 0.25,
  maxDrawNano: 2_500_000_000n,
  idleReturnMs: 30_000,
  reclaimWaitMs: 250,
  onStoreOutage: 'continue',
};
