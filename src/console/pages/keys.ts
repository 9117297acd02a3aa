/**
 * The key page (issue 13 item 2; spec 5.4): the account's keys with name, prefix, created, last used
 * and this month's spend; create a named key (shown once, with a copy button), rotate (the old key
 * stops working at once: revoked in the same transaction as its successor is made, and this process's
 * key cache cleared), revoke. Another account's key is a 404, never touched. Each key's controls (issue 33
 * item 2: budget, allowed models, expiry) are on its own page (key-settings.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LedgerError } from '../../ledger/types.js';
import { listKeys, type KeyListing } from '../account-data.js';
import { checkSessionCsrf, ConsoleRefusal, formOf, redirect, requireUser, sendPage, type ConsoleDeps, type UserSession } from '../context.js';
import { csrfField, esc, page, usd, when } from '../html.js';

/** Longest key name. */
const NAME_MAX = 64;

/** Messages after a redirect, by the `done` query value (never text from the query itself). */
const DONE: Readonly<Record<string, string>> = { revoked: 'The key was revoked. It no longer works.' };

function keyRow(key: KeyListing, csrf: string): string {
  const live = key.revokedAt === null;
  const actions = live
    ? `<div class="actions"><a class="button secondary" href="/console/keys/${esc(key.id)}" aria-label="Controls of key ${esc(key.name ?? key.prefix)}">Controls</a><form method="post" action="/console/keys/${esc(key.id)}/rotate">${csrfField(csrf)}<button type="submit" class="secondary" aria-label="Rotate key ${esc(key.name ?? key.prefix)}">Rotate</button></form>`
      + `<form method="post" action="/console/keys/${esc(key.id)}/revoke">${csrfField(csrf)}<button type="submit" class="danger" aria-label="Revoke key ${esc(key.name ?? key.prefix)}">Revoke</button></form></div>`
    : `<span class="muted">Revoked ${esc(when(key.revokedAt))}</span> <a href="/console/keys/${esc(key.id)}" aria-label="Details of key ${esc(key.name ?? key.prefix)}">Details</a>`;
  return `<tr data-key-id="${esc(key.id)}"><td>${esc(key.name ?? '(unnamed)')}</td><td><code>${esc(key.prefix ?? 'gw-')}…</code></td><td>${esc(when(key.createdAt))}</td><td>${esc(when(key.lastUsedAt))}</td><td class="num">${esc(usd(key.spendMonthNano))}</td><td>${actions}</td></tr>`;
}

function keysBody(keys: KeyListing[], csrf: string, shown: { key: string; name: string } | null): string {
  const secret = shown
    ? `<section aria-labelledby="new-key-h"><h2 id="new-key-h">Your new key “${esc(shown.name)}”</h2><p>Copy it now: it is shown only once.</p>
<p class="secret" id="new-key">${esc(shown.key)}</p><p><button type="button" class="secondary" data-copy="new-key">Copy key</button></p></section>`
    : '';
  const rows = keys.map((k) => keyRow(k, csrf)).join('');
  const table = keys.length
    ? `<div class="table"><table><caption class="muted">Spend is this calendar month (UTC); last used is the last billed request.</caption><thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col" class="num">Spend this month</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : '<p>No keys yet. Create one to call the API.</p>';
  return `${secret}<section aria-labelledby="create-h"><h2 id="create-h">Create a key</h2><form method="post" action="/console/keys">${csrfField(csrf)}
<label for="key-name">Name</label><input id="key-name" name="name" required maxlength="${NAME_MAX}" placeholder="e.g. laptop, CI, production">
<p><button type="submit">Create key</button></p></form></section><section aria-labelledby="keys-h"><h2 id="keys-h">Keys</h2>${table}</section>`;
}

/** A key just made, shown once: its text and its id (its name comes from the listing). */
interface NewKey { id: string; key: string }

async function render(deps: ConsoleDeps, reply: FastifyReply, session: UserSession, created: NewKey | null, flash: { kind: 'ok' | 'error'; text: string } | null): Promise<void> {
  const keys = await listKeys(deps.db, session.user.accountId, deps.clock.now());
  const shown = created ? { key: created.key, name: keys.find((k) => k.id === created.id)?.name ?? '' } : null;
  const html = page('API keys', keysBody(keys, session.csrfToken, shown), { nav: { active: 'keys', csrf: session.csrfToken, who: session.user.email }, flash, scripts: ['/console/assets/console.js'] });
  await sendPage(reply, html);
}

/** The key id in the path, and the signed-in user whose form it is. */
async function keyAction(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply): Promise<{ session: UserSession; keyId: string } | null> {
  const session = await requireUser(deps, req, reply);
  if (!session) return null;
  checkSessionCsrf(session, formOf(req));
  return { session, keyId: (req.params as { id: string }).id };
}

/** A key of another account, or an unknown one: the same 404. */
function notFound(error: unknown): never {
  if (error instanceof LedgerError && error.code === 'not_found') throw new ConsoleRefusal(404, 'No such key on your account (it may have been revoked already).');
  throw error;
}

/** Registers the key page and its actions. */
export function registerKeyPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  scope.get('/console/keys', async (req, reply) => {
    const session = await requireUser(deps, req, reply);
    if (!session) return;
    const query = req.query as Record<string, unknown>;
    const done = typeof query.done === 'string' ? DONE[query.done] : undefined;
    const flash = query.welcome === '1' ? { kind: 'ok' as const, text: 'Your email is verified and your account is ready. Create a key to call the API.' } : done ? { kind: 'ok' as const, text: done } : null;
    await render(deps, reply, session, null, flash);
  });
  scope.post('/console/keys', async (req, reply) => {
    const session = await requireUser(deps, req, reply);
    if (!session) return;
    const form = formOf(req);
    checkSessionCsrf(session, form);
    const name = (form.name ?? '').trim();
    if (name === '' || name.length > NAME_MAX || /[\x00-\x1f\x7f]/.test(name)) throw new ConsoleRefusal(400, `Give the key a name of 1 to ${NAME_MAX} characters.`);
    const created = await deps.ledger.createKey(session.user.accountId, name);
    deps.log('console key created', { account_id: session.user.accountId, key_id: created.id });
    await render(deps, reply, session, created, { kind: 'ok', text: 'Key created.' });
  });
  scope.post('/console/keys/:id/rotate', async (req, reply) => {
    const action = await keyAction(deps, req, reply);
    if (!action) return;
    const rotated = await deps.ledger.rotateKey(action.keyId, action.session.user.accountId).catch(notFound);
    deps.auth.clear();
    deps.log('console key rotated', { account_id: action.session.user.accountId, old_key_id: action.keyId, key_id: rotated.id });
    await render(deps, reply, action.session, rotated, { kind: 'ok', text: 'Key rotated: the old key no longer works.' });
  });
  scope.post('/console/keys/:id/revoke', async (req, reply) => {
    const action = await keyAction(deps, req, reply);
    if (!action) return;
    await deps.ledger.deleteKey(action.keyId, action.session.user.accountId).catch(notFound);
    deps.auth.clear();
    deps.log('console key revoked', { account_id: action.session.user.accountId, key_id: action.keyId });
    await redirect(reply, '/console/keys?done=revoked');
  });
}
