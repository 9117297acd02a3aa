/**
 * Upstream auth as data (issue 9 point 4): a provider's credential goes in one header, after an
 * optional prefix. Covers `Authorization: Bearer`, `x-api-key`, `xi-api-key`,
 * `Ocp-Apim-Subscription-Key` and `x-key` alike, with no scheme-specific code.
 */
import type { CancelSignal } from '../cancel.js';
import type { CompiledProvider } from '../config/types.js';
import type { PoolKey } from './key-pool.js';

/** The header and prefix a manifest's `auth` names (`scheme` is shorthand for the two common ones). */
export function authHeaderOf(auth: { scheme: 'bearer' | 'x-api-key' | 'header' | 'google-service-account' | 'sigv4'; header?: string; prefix?: string }): { header: string; prefix: string } {
  // A service account's credential is exchanged for an access token, sent as a bearer token; a sigv4
  // signature is computed per request (src/upstream/sigv4-auth.ts), its header is authorization.
  if (auth.scheme === 'bearer' || auth.scheme === 'google-service-account') return { header: 'authorization', prefix: 'Bearer ' };
  if (auth.scheme === 'sigv4') return { header: 'authorization', prefix: '' };
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

/** After a 401 to a token (`auth.tokens`) sent in `sent` (the auth headers): that token is dropped, the next request fetches a new one. */
export function forgetToken(provider: CompiledProvider, key: PoolKey | null | undefined, sent: Readonly<Record<string, string>>): void {
  const used = key ?? provider.keys.any();
  const token = sent[provider.auth.header]?.slice(provider.auth.prefix.length);
  if (used && token) provider.auth.tokens?.forget(used.value, token);
}

/**
 * The auth headers of a provider whose credential is exchanged for a token first (`auth.tokens`: the
 * key is a service-account key file's path): the token of that key, fetched or cached. Rejects with
 * a 502 GatewayError when no token can be had; `signal` ends this caller's wait.
 */
export async function tokenAuthHeaders(provider: CompiledProvider, key: PoolKey | null | undefined, signal: CancelSignal): Promise<Record<string, string>> {
  const used = key ?? provider.keys.any();
  if (!used || !provider.auth.tokens) return authHeaders(provider, key);
  return { [provider.auth.header]: provider.auth.prefix + await provider.auth.tokens.token(used.value, signal) };
}
