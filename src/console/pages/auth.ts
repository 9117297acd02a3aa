/**
 * Sign-up, email verification, sign-in and sign-out (issue 13 item 1; spec 5.4). Sign-up records a
 * pending sign-up and emails a link; the account (at the configured opening balance) and its console
 * user exist only once the link is followed, once, before it expires. Sign-in is throttled per email
 * and per address; a wrong email and a wrong password get the same answer. Sign-up answers the same
 * whether or not the email is taken, so the form does not tell who has an account.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { cookie, CSRF_COOKIE, fromLoopback, readCookies, SESSION_COOKIE } from '../cookies.js';
import { checkAnonymousCsrf, checkSessionCsrf, ConsoleRefusal, formOf, redirect, sendPage, sessionOf, type ConsoleDeps } from '../context.js';
import { csrfField, esc, page } from '../html.js';
import type { MailMessage } from '../mail.js';
import { hashPassword, PASSWORD_LIMITS, verifyPassword } from '../passwords.js';
import { closeSession, createSignup, findUser, newSecret, openSession, userExists, verifySignup } from '../store.js';

/** An address that looks like one (the emailed link proves it is). */
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,189}\.[^\s@]{1,63}$/;

/** A stored hash nobody's password matches: verified against when the email is unknown, so both take as long. */
let decoyHash: Promise<string> | null = null;

function authForms(csrf: string, email = ''): string {
  const field = (id: string, label: string, type: string, extra = ''): string =>
    `<label for="${id}">${label}</label><input id="${id}" name="${id.split('-')[1]}" type="${type}" required ${extra}>`;
  return `<div class="grid">
<section aria-labelledby="signin-h"><h2 id="signin-h">Sign in</h2><form method="post" action="/console/signin">${csrfField(csrf)}
${field('signin-email', 'Email', 'email', `autocomplete="username" value="${esc(email)}"`)}
${field('signin-password', 'Password', 'password', 'autocomplete="current-password"')}
<p><button type="submit">Sign in</button></p></form></section>
<section aria-labelledby="signup-h"><h2 id="signup-h">Create an account</h2><form method="post" action="/console/signup">${csrfField(csrf)}
${field('signup-email', 'Email', 'email', 'autocomplete="email"')}
${field('signup-password', 'Password', 'password', `autocomplete="new-password" minlength="${PASSWORD_LIMITS.min}" maxlength="${PASSWORD_LIMITS.max}" aria-describedby="pw-hint"`)}
<p id="pw-hint" class="muted">At least ${PASSWORD_LIMITS.min} characters. We email you a link; your account is created when you follow it.</p>
<p><button type="submit">Create account</button></p></form></section></div>`;
}

/** The anonymous CSRF token of the request (sign-up, sign-in, the operator's sign-in), set as a cookie when it has none. */
export function anonymousCsrf(req: FastifyRequest, reply: FastifyReply): string {
  const existing = readCookies(req)[CSRF_COOKIE];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = newSecret();
  void reply.header('set-cookie', cookie(req, CSRF_COOKIE, token, 86_400));
  return token;
}

/** The sign-in page with a message and a status. */
async function authPage(req: FastifyRequest, reply: FastifyReply, status: number, flash: { kind: 'ok' | 'error'; text: string } | null, email = ''): Promise<void> {
  await sendPage(reply, page('Sign in or create an account', authForms(anonymousCsrf(req, reply), email), { flash }), status);
}

/** The origin of emailed links: the configured one, else the request's own when it came to loopback. */
function linkOrigin(deps: ConsoleDeps, req: FastifyRequest): string {
  const configured = deps.settings().publicUrl;
  if (configured) return configured;
  // A Host header names any site: only a loopback request may supply the link's origin (a developer's machine).
  if (!fromLoopback(req)) throw new ConsoleRefusal(503, 'Sign-up is not configured on this gateway: its operator must set console.public_url (or GATEWAY_PUBLIC_URL).');
  return `http://${String(req.headers.host ?? '127.0.0.1')}`;
}

function normalisedEmail(raw: string | undefined): string {
  const email = (raw ?? '').trim().toLowerCase();
  if (!EMAIL.test(email) || email.length > 254) throw new ConsoleRefusal(400, 'Enter a valid email address.');
  return email;
}

/** Sends a console mail; a transport failure is the gateway's 503, logged without the message (it holds the link). */
async function sendMail(deps: ConsoleDeps, message: MailMessage): Promise<void> {
  try {
    await deps.mail.send(message);
  } catch (error) {
    deps.log('console mail not sent', { transport: deps.mail.kind, error: error instanceof Error ? error.message : String(error) }, 'error');
    throw new ConsoleRefusal(503, 'We could not send the email right now. Try again in a few minutes.');
  }
}

async function signup(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const form = formOf(req);
  checkAnonymousCsrf(req, form);
  const email = normalisedEmail(form.email);
  const password = form.password ?? '';
  if (password.length < PASSWORD_LIMITS.min || password.length > PASSWORD_LIMITS.max) {
    throw new ConsoleRefusal(400, `Choose a password of ${PASSWORD_LIMITS.min} to ${PASSWORD_LIMITS.max} characters.`);
  }
  const origin = linkOrigin(deps, req);
  if (await userExists(deps.db, email)) {
    await sendMail(deps, { to: email, subject: 'Your AI Gateway account', text: `Someone asked to create an AI Gateway account for this address, which already has one.\nSign in at ${origin}/console. If this was not you, ignore this message.\n` });
  } else {
    const settings = deps.settings();
    const token = await createSignup(deps.db, email, await hashPassword(password), settings.verificationTtlMs, deps.clock.now());
    const hours = Math.round(settings.verificationTtlMs / 3_600_000);
    await sendMail(deps, { to: email, subject: 'Verify your email for AI Gateway', text: `Follow this link to create your AI Gateway account:\n\n${origin}/console/verify?token=${token}\n\nThe link works once, for ${hours} hours.\n` });
  }
  await sendPage(reply, page('Check your email', `<section><p>We sent a verification link to <strong>${esc(email)}</strong>. Follow it to create your account.</p><p><a href="/console">Back to sign in</a></p></section>`));
}

const VERIFY_REFUSALS = {
  unknown: 'This verification link is not valid, or it was already used. Sign in, or sign up again.',
  used: 'This verification link is not valid, or it was already used. Sign in, or sign up again.',
  expired: 'This verification link has expired. Sign up again to get a new one.',
  taken: 'An account with this email already exists. Sign in.',
} as const;

async function verify(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const token = (req.query as Record<string, unknown>).token;
  if (typeof token !== 'string' || token.length > 200) throw new ConsoleRefusal(400, VERIFY_REFUSALS.unknown);
  const now = deps.clock.now();
  const user = await verifySignup(deps.db, token, deps.settings().signupBalanceNano, now);
  if (typeof user === 'string') throw new ConsoleRefusal(400, VERIFY_REFUSALS[user]);
  deps.log('console account created', { account_id: user.accountId, user_id: user.id });
  const session = await openSession(deps.db, { userId: user.id }, deps.settings().sessionTtlMs, now);
  void reply.header('set-cookie', cookie(req, SESSION_COOKIE, session, Math.floor(deps.settings().sessionTtlMs / 1000)));
  await redirect(reply, '/console/keys?welcome=1');
}

async function signin(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const form = formOf(req);
  checkAnonymousCsrf(req, form);
  const email = (form.email ?? '').trim().toLowerCase().slice(0, 254);
  const address = req.socket.remoteAddress ?? 'unknown';
  const wait = deps.throttle.retryAfterSeconds(email, address);
  if (wait > 0) throw new ConsoleRefusal(429, `Too many failed sign-ins. Try again in ${Math.ceil(wait / 60)} minutes.`, { 'retry-after': String(wait) });
  const user = await findUser(deps.db, email);
  decoyHash ??= hashPassword(newSecret());
  const ok = await verifyPassword((form.password ?? '').slice(0, 1024), user?.passwordHash ?? await decoyHash);
  if (!user || !ok) {
    deps.throttle.fail(email, address);
    await authPage(req, reply, 401, { kind: 'error', text: 'Wrong email or password.' }, email);
    return;
  }
  deps.throttle.succeed(email);
  const session = await openSession(deps.db, { userId: user.id }, deps.settings().sessionTtlMs, deps.clock.now());
  void reply.header('set-cookie', cookie(req, SESSION_COOKIE, session, Math.floor(deps.settings().sessionTtlMs / 1000)));
  await redirect(reply, '/console/keys');
}

/** Ends the request's session (a user's or the operator's) and clears its cookie. */
export async function signout(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const session = await sessionOf(deps, req);
  if (session) {
    checkSessionCsrf(session, formOf(req));
    await closeSession(deps.db, session.id);
  }
  void reply.header('set-cookie', cookie(req, SESSION_COOKIE, '', 0));
  await redirect(reply, '/console');
}

/** Registers the sign-up and sign-in pages. */
export function registerAuthPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  scope.get('/console', async (req, reply) => {
    const session = await sessionOf(deps, req);
    if (session?.user) return redirect(reply, '/console/keys');
    if (session?.operator) return redirect(reply, '/console/operator');
    return authPage(req, reply, 200, null);
  });
  scope.post('/console/signup', (req, reply) => signup(deps, req, reply));
  scope.get('/console/verify', (req, reply) => verify(deps, req, reply));
  scope.post('/console/signin', (req, reply) => signin(deps, req, reply));
  scope.post('/console/signout', (req, reply) => signout(deps, req, reply));
}
