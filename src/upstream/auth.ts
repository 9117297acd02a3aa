/**
 * Upstream auth as data (issue 9 point 4): a provider's credential goes in one header, after an
 * optional prefix. Covers `Authorization: Bearer`, `x-api-key`, `xi-api-key`,
 * `Ocp-Apim-Subscription-Key` and `x-key` alike, with no scheme-specific code.
 */
import type { CompiledProvider } from '../config/types.js';
import type { PoolKey } from './key-pool.js';

/** The header and prefix a manifest's `auth` names (`scheme` is shorthand for the two common ones). */
export function authHeaderOf(auth: { scheme: 'bearer' | 'x-api-key' | 'header' | 'sigv4'; header?: string; prefix?: string }): { header: string; prefix: string } {
  // A sigv4 signature is computed per request (src/upstream/sigv4-auth.ts); its header is authorization.
  if (auth.scheme === 'bearer' || auth.scheme === 'sigv4') return { header: 'authorization', prefix: auth.scheme === 'bearer' ? 'Bearer ' : '' };
  if (auth.scheme === 'x-api-key') return { header: 'x-api-key', prefix: '' };
  return { header: auth.header!.toLowerCase(), prefix: auth.prefix ?? '' };
}

/**
 * The auth headers for a provider, carrying `key` (the attempt's key from the pool, issue 29 item 2)
 * or, without one (absent or null), `provider.keys.any()`; none when the pool has no key left (the simulator),
 * and none for a sigv4 provider (signed per request by the client, src/upstream/sigv4-auth.ts).
 */
export function authHeaders(provider: CompiledProvider, key?: PoolKey | null): Record<string, string> {
  // A signed provider's credential is never sent as such: the client signs each request with it.
  if (provider.sigv4) return {};
  const used = key ?? provider.keys.any();
  return used ? { [provider.auth.header]: provider.auth.prefix + used.value } : {};
}
