/**
 * `billing.grants` of gateway.config.yaml compiled to the grant book's settings (issue 30, "Names"),
 * with the defaults. Amounts are decimal USD strings, parsed exactly to nano-USD.
 */
import type { GatewayConfigManifest } from '../generated/manifest-types.js';
import { DEFAULT_GRANTS, type GrantSettings } from '../ledger/grants/settings.js';
import { parseUsd } from '../money.js';
import { ManifestError } from './errors.js';

type RawGrants = NonNullable<NonNullable<GatewayConfigManifest['billing']>['grants']>;

/**
 * The compiled settings: what the file says, the defaults elsewhere. `max_draw_usd` defaults to half
 * the grant cap. GATEWAY_GRANTS_POST (`deferred` or `immediate`) overrides `post`.
 */
export function compileGrants(raw: RawGrants | undefined, env: NodeJS.ProcessEnv = {}): GrantSettings {
  const d = DEFAULT_GRANTS;
  const postEnv = env.GATEWAY_GRANTS_POST;
  if (postEnv !== undefined && postEnv !== '' && postEnv !== 'deferred' && postEnv !== 'immediate') {
    throw new ManifestError('env GATEWAY_GRANTS_POST', '', `must be deferred or immediate, got ${JSON.stringify(postEnv)}`);
  }
  const maxGrantNano = raw?.max_grant_usd !== undefined ? parseUsd(raw.max_grant_usd) : d.maxGrantNano;
  return {
    enabled: raw?.enabled ?? d.enabled,
    post: postEnv === 'deferred' || postEnv === 'immediate' ? postEnv : (raw?.post ?? d.post),
    flushMs: raw?.flush_ms ?? d.flushMs,
    leaseMs: (raw?.lease_seconds ?? d.leaseMs / 1000) * 1000,
    maxUnpostedNano: raw?.max_unposted_usd !== undefined ? parseUsd(raw.max_unposted_usd) : d.maxUnpostedNano,
    maxUnpostedTotalNano: raw?.max_unposted_total_usd !== undefined ? parseUsd(raw.max_unposted_total_usd) : d.maxUnpostedTotalNano,
    maxGrantNano,
    balanceFraction: raw?.balance_fraction ?? d.balanceFraction,
    maxDrawNano: raw?.max_draw_usd !== undefined ? parseUsd(raw.max_draw_usd) : maxGrantNano / 2n,
    idleReturnMs: (raw?.idle_return_seconds ?? d.idleReturnMs / 1000) * 1000,
    reclaimWaitMs: raw?.reclaim_wait_ms ?? d.reclaimWaitMs,
    onStoreOutage: raw?.on_store_outage ?? d.onStoreOutage,
  };
}
