/**
 * The host rule for URLs a vendor's answer names (a job's polling URL, a finished job's output): the
 * gateway follows them only on the provider's own base URL origin (any scheme: the simulator and
 * Prism run on loopback over http) or over https, on the default port, on a host matching one of the
 * manifest's declared patterns (`api.us1.example.com` exactly, or `*.example.com` for any subdomain).
 * Anything else is refused before any connection: a vendor answer never sends the gateway, let alone
 * with the provider's credential, to a host the operator did not declare.
 */
import { GatewayError } from '../errors.js';

/** True when `host` (lower case, no port) matches `pattern`: exact, or `*.suffix` for one or more labels before the suffix. */
export function hostMatches(host: string, pattern: string): boolean {
  if (!pattern.startsWith('*.')) return host === pattern;
  const suffix = pattern.slice(1);
  return host.length > suffix.length && host.endsWith(suffix) && !host.startsWith('.');
}

/**
 * The URL `text` names when the host rule allows it; a relative URL resolves against `baseUrl`.
 * Throws a 502 `upstream_error` saying `what` was refused (nothing is fetched).
 */
export function allowedVendorUrl(text: unknown, baseUrl: string, hosts: readonly string[], what: string): URL {
  if (typeof text !== 'string' || text === '') throw new GatewayError('upstream_error', `The upstream provider sent no ${what}.`);
  let url: URL;
  try { url = new URL(text, baseUrl); } catch { throw new GatewayError('upstream_error', `The upstream provider sent an invalid ${what}.`); }
  if (url.origin === new URL(baseUrl).origin) return url;
  const declared = url.protocol === 'https:' && url.port === '' && url.username === '' && url.password === ''
    && hosts.some((pattern) => hostMatches(url.hostname.toLowerCase(), pattern));
  if (!declared) throw new GatewayError('upstream_error', `The upstream provider sent a ${what} on another host.`);
  return url;
}
