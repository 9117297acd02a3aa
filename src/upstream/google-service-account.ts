/**
 * The `google-service-account` auth scheme (issue 32 item 3): a service-account key file (JSON with
 * client_email, private_key, token_uri, private_key_id) signs an RS256 JWT (RFC 7523: iss, scope,
 * aud = token_uri, iat, exp one hour later), exchanged at token_uri for an OAuth access token
 * (grant_type urn:ietf:params:oauth:grant-type:jwt-bearer, form-encoded), as Google documents it
 * (https://developers.google.com/identity/protocols/oauth2/service-account#authorizingrequests).
 *
 * A token is used until shortly (60 s) before it expires; concurrent requests share one fetch in
 * flight (single flight), and a request uses the token of the fetch it waited for, so it never waits
 * twice. A failed fetch is cached by no one: every waiter gets the same clean 502 (TokenUnavailable:
 * a failed attempt of the deployment, so another deployment may serve the request) and the next
 * request tries again. The key file is read at each fetch (once an hour), so a rotated file is picked up.
 */
import { createSign } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request } from 'undici';
import type { CancelSignal } from '../cancel.js';
import { TokenUnavailable } from './token-unavailable.js';

/** The fields of a service-account key file the exchange uses. */
export interface ServiceAccountKey { client_email: string; private_key: string; token_uri: string; private_key_id?: string }

/** How long before its expiry a token is no longer used. */
export const REFRESH_MARGIN_MS = 60_000;

/** A token's life as the JWT asks for it (Google's maximum). */
const ASSERTION_SECONDS = 3600;

const base64url = (data: string | Buffer): string => Buffer.from(data).toString('base64url');

/** The 502 every failure of the exchange is: safe to show, naming no path, key or vendor answer. */
function tokenFailure(why: string, transient = false): TokenUnavailable {
  return new TokenUnavailable(`The gateway could not obtain an access token for the upstream provider (${why}).`, transient);
}

/** Reads and checks a key file; a missing or malformed one is the 502 (the operator's to fix, logged by the caller). */
export async function readServiceAccountKey(path: string): Promise<ServiceAccountKey> {
  let parsed: unknown;
  try { parsed = JSON.parse(await readFile(path, 'utf8')); } catch { throw tokenFailure('the service-account key file could not be read'); }
  const key = parsed as Partial<ServiceAccountKey> | null;
  const fields = ['client_email', 'private_key', 'token_uri'] as const;
  if (!key || fields.some((f) => typeof key[f] !== 'string' || key[f] === '') || !/^https?:\/\//.test(key.token_uri!)) {
    throw tokenFailure('the service-account key file lacks client_email, private_key or token_uri');
  }
  return key as ServiceAccountKey;
}

/** The signed JWT (RS256) asserting `key`'s identity for `scope`, issued at `nowMs`. */
export function signedAssertion(key: ServiceAccountKey, scope: string, nowMs: number): string {
  const iat = Math.floor(nowMs / 1000);
  const header = { alg: 'RS256', typ: 'JWT', ...(key.private_key_id ? { kid: key.private_key_id } : {}) };
  const claims = { iss: key.client_email, scope, aud: key.token_uri, iat, exp: iat + ASSERTION_SECONDS };
  const unsigned = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  let signature: Buffer;
  try { signature = createSign('RSA-SHA256').update(unsigned).sign(key.private_key); } catch { throw tokenFailure('the service-account private key is not a valid RSA key'); }
  return `${unsigned}.${signature.toString('base64url')}`;
}

/** A token and the instant (ms) until which it is used. */
interface CachedToken { value: string; usableUntil: number }

/** Options of AccessTokens; tests inject the clock of the cache. */
export interface AccessTokenOptions { now?: () => number; timeoutMs?: number }

/** The access tokens of one scope, one cache entry and at most one fetch in flight per key file. */
export class AccessTokens {
  private readonly cached = new Map<string, CachedToken>();
  private readonly inflight = new Map<string, Promise<string>>();
  private readonly now: () => number;
  private readonly timeoutMs: number;

  constructor(readonly scope: string, opts: AccessTokenOptions = {}) {
    this.now = opts.now ?? Date.now;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
  }

  /**
   * A usable access token for the key file at `keyFile`: the cached one, else the result of the fetch
   * in flight (joined, never started twice), else a new fetch. `signal` stops this caller's wait
   * only: the fetch goes on for the others.
   */
  async token(keyFile: string, signal?: CancelSignal): Promise<string> {
    const cached = this.cached.get(keyFile);
    if (cached && this.now() < cached.usableUntil) return cached.value;
    let fetching = this.inflight.get(keyFile);
    if (!fetching) {
      fetching = this.fetch(keyFile).finally(() => this.inflight.delete(keyFile));
      this.inflight.set(keyFile, fetching);
    }
    return signal ? abortable(fetching, signal) : fetching;
  }

  /**
   * Drops `token`, the cached token of `keyFile`, which the upstream refused (revoked, or expired
   * early): the next call fetches one. A newer token cached meanwhile stays.
   */
  forget(keyFile: string, token: string): void {
    if (this.cached.get(keyFile)?.value === token) this.cached.delete(keyFile);
  }

  private async fetch(keyFile: string): Promise<string> {
    const key = await readServiceAccountKey(keyFile);
    const sentAt = this.now();
    // The assertion's times are the wall clock's (the endpoint checks them); the cache runs on `now`.
    const form = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: signedAssertion(key, this.scope, Date.now()) });
    let status: number;
    let text: string;
    try {
      const res = await request(key.token_uri, {
        method: 'POST', body: form.toString(), headersTimeout: this.timeoutMs, bodyTimeout: this.timeoutMs,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch {
      throw tokenFailure('the token endpoint could not be reached', true);
    }
    const answer = parseJson(text) as { access_token?: unknown; expires_in?: unknown; error?: unknown } | null;
    // RFC 6749 5.2: the error code (invalid_grant, ...) says what the operator must fix; its description is not repeated.
    const code = typeof answer?.error === 'string' && /^[a-z_]{1,40}$/.test(answer.error) ? ` ${answer.error}` : '';
    // A rate limit or the endpoint's own failure may pass; a refused grant (invalid_grant, ...) will not.
    if (status !== 200) throw tokenFailure(`the token endpoint answered ${status}${code}`, status === 429 || status >= 500);
    if (typeof answer?.access_token !== 'string' || answer.access_token === '' || /[\r\n]/.test(answer.access_token)) throw tokenFailure('the token endpoint sent no access token');
    // Counted from when the assertion was sent: the token cannot outlive what the endpoint granted.
    const lifeMs = typeof answer.expires_in === 'number' && answer.expires_in > 0 ? answer.expires_in * 1000 : ASSERTION_SECONDS * 1000;
    this.cached.set(keyFile, { value: answer.access_token, usableUntil: sentAt + lifeMs - REFRESH_MARGIN_MS });
    return answer.access_token;
  }
}

function parseJson(text: string): unknown {
  try { return JSON.parse(text); } catch { return null; }
}

/** `promise`, or the signal's reason once it aborts first (the promise itself goes on). */
function abortable<T>(promise: Promise<T>, signal: CancelSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const stop = (): void => reject(signal.reason);
    signal.addEventListener('abort', stop, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}
