/**
 * What the console's pages share (issue 13): their dependencies, the form parser, the session of a
 * request, CSRF checks, and the answers (a page, a redirect, a refusal). Console pages never read an
 * API key and API routes never read the console cookie: a session is not a key, a key opens no page.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.js';
import type { CompiledGateway, ConsoleSettings } from '../config/types.js';
import type { Ledger } from '../ledger/ledger.js';
import type { AuthCache } from '../pipeline/auth-cache.js';
import type { Db } from '../store/db.js';
import { readCookies, sameToken, SESSION_COOKIE, CSRF_COOKIE } from './cookies.js';
import type { MailTransport } from './mail.js';
import { digest, findSession, type ConsoleSession } from './store.js';
import type { SigninThrottle } from './throttle.js';

/** The console's dependencies. */
export interface ConsoleDeps {
  db: Db;
  ledger: Ledger;
  /** Cleared when a key is rotated or revoked, so the old key stops working at once in this process. */
  auth: AuthCache;
  mail: MailTransport;
  settings: () => ConsoleSettings;
  gateway: () => CompiledGateway;
  /** The admin token: it opens the operator view; null leaves the operator view closed. */
  adminToken: string | null;
  clock: Clock;
  throttle: SigninThrottle;
  log: (message: string, fields?: Record<string, unknown>, level?: 'info' | 'warn' | 'error') => void;
}

/** A posted form's fields (the last value of a repeated name). */
export type Form = Record<string, string>;

/** Parses an application/x-www-form-urlencoded body. */
export function parseForm(text: string): Form {
  const out: Form = {};
  for (const [name, value] of new URLSearchParams(text)) out[name] = value;
  return out;
}

/** The request's form (empty for a non-form body). */
export function formOf(req: FastifyRequest): Form {
  return req.body && typeof req.body === 'object' && !Array.isArray(req.body) ? (req.body as Form) : {};
}

/** A refusal the console answers as a page, with a status. */
export class ConsoleRefusal extends Error {
  constructor(readonly status: number, message: string, readonly headers: Record<string, string> = {}) { super(message); }
}

/** The live session of the request (from its cookie), or null. */
export async function sessionOf(deps: ConsoleDeps, req: FastifyRequest): Promise<(ConsoleSession & { id: string }) | null> {
  const id = readCookies(req)[SESSION_COOKIE];
  if (!id || id.length > 200) return null;
  const session = await findSession(deps.db, id, deps.clock.now());
  if (!session) return null;
  // An operator session ends when the admin token changes (or the operator view is turned off).
  if (session.operator && (!deps.adminToken || !sameToken(session.adminTokenDigest ?? '', digest(deps.adminToken)))) return null;
  return { ...session, id };
}

/** Refuses a state-changing form of a session without that session's CSRF token. */
export function checkSessionCsrf(session: ConsoleSession, form: Form): void {
  if (!sameToken(form.csrf, session.csrfToken)) throw new ConsoleRefusal(403, 'The form has expired or did not come from this console. Reload the page and try again.');
}

/** Refuses an anonymous form (sign-up, sign-in) whose token does not match its CSRF cookie. */
export function checkAnonymousCsrf(req: FastifyRequest, form: Form): void {
  if (!sameToken(form.csrf, readCookies(req)[CSRF_COOKIE])) throw new ConsoleRefusal(403, 'The form has expired or did not come from this console. Reload the page and try again.');
}

/** Sends a page. */
export async function sendPage(reply: FastifyReply, html: string, status = 200): Promise<void> {
  await reply.code(status).header('content-type', 'text/html; charset=utf-8').header('cache-control', 'no-store').send(html);
}

/** Redirects after a form (303: the browser follows with GET). */
export async function redirect(reply: FastifyReply, to: string): Promise<void> {
  await reply.code(303).header('location', to).header('cache-control', 'no-store').send();
}

/** A signed-in user's session. */
export type UserSession = ConsoleSession & { id: string; user: NonNullable<ConsoleSession['user']> };

/**
 * The signed-in user of a page: a GET without one goes to the sign-in page (null returned, the reply
 * sent); a POST without one is refused (a form cannot be carried across a sign-in).
 */
export async function requireUser(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply): Promise<UserSession | null> {
  const session = await sessionOf(deps, req);
  if (session?.user) return session as UserSession;
  if (req.method !== 'GET') throw new ConsoleRefusal(401, 'Your session has ended. Sign in again.');
  await redirect(reply, '/console');
  return null;
}
