/**
 * The simulator's Google OAuth token endpoint (`POST /token`) for service accounts (issue 32 item 3):
 * it takes the JWT-bearer grant (RFC 7523) as Google does
 * (https://developers.google.com/identity/protocols/oauth2/service-account#authorizingrequests),
 * checks the assertion's RS256 signature against the public key registered for its `iss`, its `aud`
 * (this endpoint's own URL), its scope and its times, and answers an access token with `expires_in`.
 * Accounts are registered by the test (`POST /__sim/google/accounts {client_email, public_key,
 * expires_in?, hold?}`): with `hold`, token answers wait for `POST /__sim/release`. Faults scope to the
 * endpoint by the name `google-oauth-token`; each exchange is in the request log under that name.
 * Routes of Google's APIs check the bearer tokens issued here (`bearer`).
 */
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import type http from 'node:http';
import type { RawRequest } from './anthropic-files.js';
import type { SimMatch } from './azure-content-safety.js';
import type { Exchange, SimRoute } from './exchange.js';

/** The fault key (and request-log name) of the token endpoint. */
export const TOKEN_FAULT_KEY = 'google-oauth-token';

/** The scope the simulated Google APIs require. */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

interface Account { publicKey: KeyObject; expiresIn: number; hold: boolean }

type Json = Record<string, unknown>;

/** Google's token endpoint error body. */
const oauthError = (error: string, description: string): Json => ({ error, error_description: description });

/** A Google API error body (`google.rpc.Status` as JSON). */
export function googleError(code: number, status: string, message: string): Json {
  return { error: { code, message, status } };
}

function decodePart(part: string | undefined): Json | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
  } catch { return null; }
}

/** Service accounts, the tokens issued to them, and the endpoint that issues them. */
export class SimServiceAccounts {
  private readonly accounts = new Map<string, Account>();
  private readonly tokens = new Map<string, number>();

  /** Registers (or replaces) an account from a control request body; a message when the body is wrong. */
  register(body: unknown): string | null {
    const b = (body ?? {}) as { client_email?: unknown; public_key?: unknown; expires_in?: unknown; hold?: unknown };
    if (typeof b.client_email !== 'string' || typeof b.public_key !== 'string') return 'client_email and public_key (PEM) are required';
    let publicKey: KeyObject;
    try { publicKey = createPublicKey(b.public_key); } catch { return 'public_key is not a PEM public key'; }
    const expiresIn = typeof b.expires_in === 'number' && b.expires_in > 0 ? b.expires_in : 3600;
    this.accounts.set(b.client_email, { publicKey, expiresIn, hold: b.hold === true });
    return null;
  }

  /** Forgets every account and token. */
  reset(): void {
    this.accounts.clear();
    this.tokens.clear();
  }

  /**
   * Whether a Google API request may go on: a bearer token issued here and not expired; without
   * one, only while no account is registered (the keyless simulation sends none).
   */
  bearer(headers: http.IncomingHttpHeaders): boolean {
    const token = /^Bearer (.+)$/.exec(headers.authorization ?? '')?.[1];
    if (token === undefined) return this.accounts.size === 0;
    const until = this.tokens.get(token);
    return until !== undefined && Date.now() < until;
  }

  /** The matcher of `POST /token`. */
  readonly match = (method: string, url: URL, raw: RawRequest): SimMatch | undefined => {
    if (method !== 'POST' || url.pathname !== '/token') return undefined;
    const route: SimRoute = {
      faultResponse: (status) => ({ body: oauthError(status >= 500 ? 'internal_failure' : 'invalid_request', `Simulated error (status ${status}).`), headers: {} }),
      handle: (x) => this.exchange(x, raw),
    };
    return { route, faultKey: TOKEN_FAULT_KEY };
  };

  private async exchange(x: Exchange, raw: RawRequest): Promise<void> {
    const checked = this.check(x);
    if (typeof checked === 'string') return x.sendJson(400, oauthError('invalid_grant', checked));
    if (checked.hold) await raw.sink.released();
    const token = `ya29.sim-${randomBytes(12).toString('hex')}`;
    this.tokens.set(token, Date.now() + checked.expiresIn * 1000);
    x.sendJson(200, { access_token: token, expires_in: checked.expiresIn, token_type: 'Bearer' });
  }

  /** The account a grant request proves, or why it is refused. */
  private check(x: Exchange): Account | string {
    if (!/^application\/x-www-form-urlencoded/.test(String(x.headers['content-type'] ?? ''))) return 'The request must be form-encoded.';
    const form = new URLSearchParams(x.raw);
    if (form.get('grant_type') !== JWT_BEARER) return 'Invalid grant_type.';
    const parts = (form.get('assertion') ?? '').split('.');
    const header = decodePart(parts[0]);
    const claims = decodePart(parts[1]);
    if (parts.length !== 3 || !header || !claims || header.alg !== 'RS256') return 'Invalid JWT: not an RS256 JWT.';
    const account = typeof claims.iss === 'string' ? this.accounts.get(claims.iss) : undefined;
    if (!account) return 'Invalid JWT: unknown issuer.';
    if (!verify('RSA-SHA256', Buffer.from(`${parts[0]}.${parts[1]}`), account.publicKey, Buffer.from(parts[2]!, 'base64url'))) return 'Invalid JWT Signature.';
    if (claims.aud !== `http://${x.headers.host}/token`) return 'Invalid JWT: audience is not this token endpoint.';
    if (typeof claims.scope !== 'string' || !claims.scope.split(' ').includes(CLOUD_PLATFORM_SCOPE)) return 'Invalid JWT: scope missing.';
    const now = Date.now() / 1000;
    const { iat, exp } = claims;
    if (typeof iat !== 'number' || typeof exp !== 'number' || exp - iat > 3600 || exp <= now || iat > now + 300) return 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.';
    return account;
  }
}
