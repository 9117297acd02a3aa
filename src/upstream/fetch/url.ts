/**
 * The URL rules of the SSRF-safe fetcher (issue 11 item 7): https only (http only for a host on
 * `url_inputs.allow_hosts`), no userinfo, any port, and an IP-literal host judged by the address
 * rules before anything is resolved or connected. Hostnames are normalised by WHATWG URL parsing
 * (`2130706433`, `0x7f000001`, `0177.0.0.1` and `127.1` all become `127.0.0.1`); names are judged
 * later, on the addresses they resolve to (fetch.ts), never by string matching.
 */
import { GatewayError } from '../../errors.js';
import { ipLiteral, refusedAddressReason } from './addresses.js';

/** Longest URL accepted as an input. */
export const MAX_URL_LENGTH = 8192;

/** A refused or failed URL input: the client's URL is the client's problem, so always a 400 naming the parameter. */
export function urlInputError(param: string, problem: string): GatewayError {
  return new GatewayError('invalid_request', `${param}: ${problem}`, { param });
}

/** One hop's target once the URL rules have passed. */
export interface UrlTarget {
  /** The parsed URL, fragment removed. */
  url: URL;
  /** `host:port` as the allow list spells it (`127.0.0.1:9000`, `[::1]:443`, `images.example.com:443`). */
  hostKey: string;
  /** Listed on `url_inputs.allow_hosts`: the address rules are skipped for this hop only. */
  allowed: boolean;
  /** The bare IP address when the host is an IP literal; null for a name (resolved at connect time). */
  literal: string | null;
}

function defaultPort(protocol: string): string {
  return protocol === 'https:' ? '443' : '80';
}

/**
 * An allow-list entry (`host:port`) in the spelling the fetcher compares, or null when it is not
 * one (no port, a path, userinfo): such an entry matches nothing.
 */
export function allowHostKey(entry: string): string | null {
  if (!/:\d{1,5}$/.test(entry) || /[/@?#\\\s]/.test(entry)) return null;
  let url: URL;
  try { url = new URL(`http://${entry}`); } catch { return null; }
  return `${url.hostname}:${url.port || '80'}`;
}

/** The allow list as a set of normalised `host:port` keys. */
export function allowHostSet(entries: readonly string[]): ReadonlySet<string> {
  const keys = new Set<string>();
  for (const entry of entries) {
    const key = allowHostKey(entry);
    if (key !== null) keys.add(key);
  }
  return keys;
}

/**
 * Applies the URL rules to `raw` (the client's URL, or a redirect's resolved target) and returns the
 * hop's target; throws the client's 400 naming `param` when the URL is refused. `prefix` is put
 * before the problem (a redirect says so).
 */
export function parseUrlInput(raw: string, param: string, allow: ReadonlySet<string>, prefix = ''): UrlTarget {
  const refuse = (problem: string): GatewayError => urlInputError(param, `${prefix}${problem}`);
  if (raw.length > MAX_URL_LENGTH) throw refuse(`the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try { url = new URL(raw); } catch { throw refuse('not a valid absolute URL'); }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw refuse(`only https URLs are accepted, not ${url.protocol}`);
  // An empty userinfo (`https://:@host/`) parses to no credentials; it is refused all the same.
  const authority = /^[a-z][a-z0-9+.-]*:[/\\]*([^/\\?#]*)/i.exec(raw.trim())?.[1] ?? '';
  if (url.username !== '' || url.password !== '' || authority.includes('@')) throw refuse('URLs carrying credentials (user:password@) are not accepted');
  if (url.hostname === '') throw refuse('the URL has no host');
  const hostKey = `${url.hostname}:${url.port || defaultPort(url.protocol)}`;
  const allowed = allow.has(hostKey);
  if (url.protocol === 'http:' && !allowed) throw refuse('only https URLs are accepted');
  const literal = ipLiteral(url.hostname);
  if (literal !== null && !allowed) {
    const reason = refusedAddressReason(literal);
    if (reason !== null) throw refuse(`the URL's host is ${reason}`);
  }
  url.hash = '';
  return { url, hostKey, allowed, literal };
}
