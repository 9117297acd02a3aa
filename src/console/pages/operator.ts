/**
 * The operator view (issue 13 item 5), behind the admin token: the operator signs in with it (compared
 * in constant time, failures throttled per address) and gets an operator session, which opens only
 * these pages; a user's session never opens them (403), and an operator session has no account pages
 * (those require a user). It mirrors the admin API (src/admin/routes.ts): accounts with balances and
 * holds, top-ups, refunds of a usage row, the reconcile status, and the development outbox. Every
 * form is checked against the session's CSRF token and redirects with a fixed message key.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LedgerError } from '../../ledger/types.js';
import { parseUsd } from '../../money.js';
import { sqlState } from '../../store/db.js';
import { listTopups, listUsageRows } from '../account-data.js';
import { cookie, SESSION_COOKIE } from '../cookies.js';
import { checkAnonymousCsrf, checkSessionCsrf, ConsoleRefusal, formOf, redirect, sendPage, sessionOf, type ConsoleDeps } from '../context.js';
import { page } from '../html.js';
import { openSession, type ConsoleSession } from '../store.js';
import { anonymousCsrf, signout } from './auth.js';
import { findAccount, listAccounts, refundedAmong } from './operator-data.js';
import { accountBody, accountsBody, outboxBody, reconcileBody, signinBody, subnav, type OperatorTab } from './operator-views.js';

/** An operator's session. */
type OperatorSession = ConsoleSession & { id: string };

/** An operator session lasts at most this long (a user's may last longer: the admin token is the stronger key). */
const OPERATOR_SESSION_MAX_MS = 12 * 3_600_000;
/** Accounts the table lists at most (newest first; the search finds the others). */
const ACCOUNTS_SHOWN = 500;
/** Usage rows an account's page lists (issue 13 item 5: "its latest usage rows"). */
const USAGE_SHOWN = 100;
/** Longest id accepted in a path (ids are short; anything longer is no id). */
const ID_MAX = 200;

/** Messages after a redirect, by the `done` query value (never text from the query itself). */
const DONE: Readonly<Record<string, string>> = {
  topup: 'The top-up was added to the balance.',
  refunded: 'The usage row was refunded: its amount is back on the balance.',
};

const NOT_ENABLED = 'The operator view is not enabled on this gateway: it needs an admin token (GATEWAY_ADMIN_TOKEN).';
const USERS_REFUSED = 'The operator view is for the gateway’s operator, and you are signed in to an account. Sign out, then sign in here with the admin token.';

/**
 * The throttle's "email" key of the operator's sign-in from `address`. It has capitals, and a user's
 * sign-in lower-cases the email it counts against, so no user sign-in can count against it.
 */
function throttleKey(address: string): string {
  return `OPERATOR ${address}`;
}

/** Whether `given` is the admin token, in constant time: both are hashed, so the buffers have equal length. */
function isAdminToken(expected: string, given: string): boolean {
  const hash = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(hash(given), hash(expected));
}

/** Refuses every operator page while the gateway has no admin token. */
function enabled(deps: ConsoleDeps): string {
  if (!deps.adminToken) throw new ConsoleRefusal(404, NOT_ENABLED);
  return deps.adminToken;
}

/**
 * The operator's session: a user's session is refused (403); without a session, a GET goes to the
 * sign-in form (null returned, the reply sent) and a POST is refused (its form cannot survive a sign-in).
 */
async function requireOperator(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply): Promise<OperatorSession | null> {
  enabled(deps);
  const session = await sessionOf(deps, req);
  if (session?.user) throw new ConsoleRefusal(403, USERS_REFUSED);
  if (session?.operator) return session;
  if (req.method !== 'GET') throw new ConsoleRefusal(401, 'Your operator session has ended. Sign in again.');
  await redirect(reply, '/console/operator');
  return null;
}

/** Sends an operator page: the navigation, the operator's sub-navigation, the body. */
async function operatorPage(deps: ConsoleDeps, reply: FastifyReply, session: OperatorSession, title: string, tab: OperatorTab | null, body: string, flash: { kind: 'ok' | 'error'; text: string } | null = null): Promise<void> {
  const nav = { active: 'operator' as const, csrf: session.csrfToken, who: 'Operator', operator: true };
  await sendPage(reply, page(title, subnav(tab, deps.mail.kind === 'outbox') + body, { nav, flash }));
}

/** The sign-in form, with a status and a message. */
async function signinPage(req: FastifyRequest, reply: FastifyReply, status: number, flash: { kind: 'ok' | 'error'; text: string } | null): Promise<void> {
  await sendPage(reply, page('Operator', signinBody(anonymousCsrf(req, reply)), { flash }), status);
}

async function signin(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const expected = enabled(deps);
  const form = formOf(req);
  checkAnonymousCsrf(req, form);
  if ((await sessionOf(deps, req))?.user) throw new ConsoleRefusal(403, USERS_REFUSED);
  const address = req.socket.remoteAddress ?? 'unknown';
  const wait = deps.throttle.retryAfterSeconds(throttleKey(address), address);
  if (wait > 0) throw new ConsoleRefusal(429, `Too many failed sign-ins. Try again in ${Math.ceil(wait / 60)} minutes.`, { 'retry-after': String(wait) });
  if (!isAdminToken(expected, (form.token ?? '').slice(0, 1024))) {
    deps.throttle.fail(throttleKey(address), address);
    deps.log('console operator sign-in refused', { address }, 'warn');
    await signinPage(req, reply, 401, { kind: 'error', text: 'That is not the admin token.' });
    return;
  }
  deps.throttle.succeed(throttleKey(address));
  const ttl = Math.min(deps.settings().sessionTtlMs, OPERATOR_SESSION_MAX_MS);
  const session = await openSession(deps.db, { operator: true, adminToken: expected }, ttl, deps.clock.now());
  deps.log('console operator signed in', { address });
  void reply.header('set-cookie', cookie(req, SESSION_COOKIE, session, Math.floor(ttl / 1000)));
  await redirect(reply, '/console/operator');
}

/** The flash of a page reached by a form's redirect. */
function doneFlash(req: FastifyRequest): { kind: 'ok'; text: string } | null {
  const done = (req.query as Record<string, unknown>).done;
  const text = typeof done === 'string' ? DONE[done] : undefined;
  return text ? { kind: 'ok', text } : null;
}

/** A path id, bounded (an unknown one is the ledger's not_found). */
function pathId(req: FastifyRequest, name: string): string {
  const id = (req.params as Record<string, string>)[name] ?? '';
  if (id === '' || id.length > ID_MAX) throw new ConsoleRefusal(404, 'No such record.');
  return id;
}

/** Ledger refusals as pages (the codes of src/ledger/types.ts, as src/admin/errors.ts maps them). */
function ledgerRefusal(subject: 'account' | 'row'): (error: unknown) => never {
  return (error) => {
    if (error instanceof LedgerError) {
      if (error.code === 'not_found') throw new ConsoleRefusal(404, subject === 'account' ? 'No such account.' : 'No such usage row.');
      if (error.code === 'already_refunded') throw new ConsoleRefusal(409, 'This usage row was refunded already: a row is refunded once.');
      if (error.code === 'invalid_amount') throw new ConsoleRefusal(400, subject === 'row' ? 'This row is itself a refund: it cannot be refunded.' : 'Enter a positive amount in US dollars.');
    }
    // A bigint column overflowed: an absurdly large amount (as src/admin/errors.ts maps it).
    if (sqlState(error) === '22003') throw new ConsoleRefusal(400, 'That amount is out of range.');
    throw error;
  };
}

/** A top-up amount: a positive decimal of US dollars with at most 9 decimals, exactly. */
function topupAmount(raw: string | undefined): bigint {
  let nano: bigint;
  try { nano = parseUsd((raw ?? '').slice(0, 64)); } catch { throw new ConsoleRefusal(400, 'Enter the amount as a number of US dollars, such as 25 or 10.50 (at most 9 decimals).'); }
  if (nano <= 0n) throw new ConsoleRefusal(400, 'Enter a positive amount in US dollars.');
  return nano;
}

async function accountsPage(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply, session: OperatorSession): Promise<void> {
  const raw = (req.query as Record<string, unknown>).q;
  const search = typeof raw === 'string' ? raw.trim().slice(0, 100) : '';
  const { accounts, total } = await listAccounts(deps.db, search, ACCOUNTS_SHOWN);
  await operatorPage(deps, reply, session, 'Accounts', 'accounts', accountsBody(accounts, total, search), doneFlash(req));
}

async function accountPage(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const session = await requireOperator(deps, req, reply);
  if (!session) return;
  const account = await findAccount(deps.db, pathId(req, 'id'));
  if (!account) throw new ConsoleRefusal(404, 'No such account.');
  const topups = await listTopups(deps.db, account.id);
  const rows = await listUsageRows(deps.db, account.id, {}, USAGE_SHOWN);
  const refunded = await refundedAmong(deps.db, account.id, rows);
  await operatorPage(deps, reply, session, `Account ${account.id}`, null, accountBody(account, topups, rows, refunded, session.csrfToken), doneFlash(req));
}

async function topup(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const session = await requireOperator(deps, req, reply);
  if (!session) return;
  const form = formOf(req);
  checkSessionCsrf(session, form);
  const accountId = pathId(req, 'id');
  const amount = topupAmount(form.amount);
  await deps.ledger.topUp(accountId, amount).catch(ledgerRefusal('account'));
  deps.log('console operator top-up', { account_id: accountId, amount_nano: amount.toString() });
  await redirect(reply, `/console/operator/accounts/${encodeURIComponent(accountId)}?done=topup`);
}

async function refund(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const session = await requireOperator(deps, req, reply);
  if (!session) return;
  checkSessionCsrf(session, formOf(req));
  const rowId = pathId(req, 'row_id');
  const row = await deps.ledger.refund(rowId).catch(ledgerRefusal('row'));
  deps.log('console operator refund', { account_id: row.accountId, row_id: rowId, refund_row_id: row.id });
  await redirect(reply, `/console/operator/accounts/${encodeURIComponent(row.accountId)}?done=refunded`);
}

/** Registers the operator's sign-in, sign-out and pages. */
export function registerOperatorPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  scope.get('/console/operator', async (req, reply) => {
    enabled(deps);
    const session = await sessionOf(deps, req);
    if (session?.user) throw new ConsoleRefusal(403, USERS_REFUSED);
    if (session?.operator) return accountsPage(deps, req, reply, session);
    return signinPage(req, reply, 200, null);
  });
  scope.post('/console/operator/signin', (req, reply) => signin(deps, req, reply));
  scope.post('/console/operator/signout', (req, reply) => signout(deps, req, reply));
  scope.get('/console/operator/accounts/:id', (req, reply) => accountPage(deps, req, reply));
  scope.post('/console/operator/accounts/:id/topup', (req, reply) => topup(deps, req, reply));
  scope.post('/console/operator/usage/:row_id/refund', (req, reply) => refund(deps, req, reply));
  scope.get('/console/operator/reconcile', async (req, reply) => {
    const session = await requireOperator(deps, req, reply);
    if (!session) return;
    await operatorPage(deps, reply, session, 'Reconcile', 'reconcile', reconcileBody(await deps.ledger.reconcile()));
  });
  scope.get('/console/operator/outbox', async (req, reply) => {
    const session = await requireOperator(deps, req, reply);
    if (!session) return;
    if (deps.mail.kind !== 'outbox') throw new ConsoleRefusal(404, 'Mail goes out over SMTP on this gateway: there is no outbox.');
    await operatorPage(deps, reply, session, 'Outbox', 'outbox', outboxBody(deps.mail.outbox()));
  });
}
