/**
 * The console's cookies (issue 13): the session cookie `gw_session` and the anonymous CSRF cookie
 * `gw_csrf` (double-submit: the sign-up and sign-in forms carry the same random value). Both are
 * `HttpOnly`, `SameSite=Lax`, scoped to `/console`, and `Secure` unless the request came over plain
 * HTTP to a loopback address (a developer's `npm start`); behind a TLS-terminating proxy the gateway
 * trusts X-Forwarded-Proto only from loopback peers.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

/** The session cookie's name. */
export const SESSION_COOKIE = 'gw_session';
/** The anonymous forms' CSRF cookie. */
export const CSRF_COOKIE = 'gw_csrf';

/** The request's cookies by name (first value wins). */
export function readCookies(req: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at < 1) continue;
    const name = part.slice(0, at).trim();
    if (!(name in out)) {
      try { out[name] = decodeURIComponent(part.slice(at + 1).trim()); } catch { /* a malformed value is no value */ }
    }
  }
  return out;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|::ffff:127\.\d+\.\d+\.\d+)$/;

/** Whether the peer is this machine. */
export function fromLoopback(req: FastifyRequest): boolean {
  return LOOPBACK.test(req.socket.remoteAddress ?? '');
}

/** Whether the browser reached the console over plain HTTP on loopback: the only case without `Secure`. */
function plainLoopback(req: FastifyRequest): boolean {
  const forwarded = fromLoopback(req) ? String(req.headers['x-forwarded-proto'] ?? '').split(',')[0]?.trim() : '';
  const encrypted = forwarded === 'https' || (req.socket as { encrypted?: boolean }).encrypted === true;
  const host = String(req.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return !encrypted && fromLoopback(req) && (host === 'localhost' || LOOPBACK.test(host));
}

/** A Set-Cookie value for `name`; `maxAgeSeconds` 0 deletes it. */
export function cookie(req: FastifyRequest, name: string, value: string, maxAgeSeconds: number): string {
  const secure = plainLoopback(req) ? '' : '; Secure';
  return `${name}=${encodeURIComponent(value)}; Path=/console; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure}`;
}

/** Constant-time comparison of two tokens (different lengths: false). */
export function sameToken(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b) return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
