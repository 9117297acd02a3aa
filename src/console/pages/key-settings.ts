/**
 * A key's own page (issue 33 item 2): its controls (a budget per day, month or in total, the models it
 * may use with `*` patterns, when it expires) and what it spent and holds in its budget period; the
 * account's user edits them here. A change takes effect on the key's next request (this process's key
 * cache is cleared, as on a rotation). Another account's key is a 404, never shown.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { BUDGET_PERIODS, type BudgetPeriod, type KeyControls, type KeyDetails } from '../../ledger/key-controls.js';
import { LedgerError } from '../../ledger/types.js';
import { formatUsd, parseUsd } from '../../money.js';
import { checkSessionCsrf, ConsoleRefusal, formOf, redirect, requireUser, sendPage, type ConsoleDeps, type Form, type UserSession } from '../context.js';
import { csrfField, esc, page, usd, when } from '../html.js';

/** Most model patterns a key lists. */
const MODELS_MAX = 200;

/** What `<input type="datetime-local">` holds: a UTC time to the minute (the page says UTC). */
function localValue(at: Date | null): string {
  return at ? at.toISOString().slice(0, 16) : '';
}

function budgetSection(key: KeyDetails): string {
  const c = key.controls;
  if (c.budgetNano === null || !key.usage) return '<p>This key has no budget: it spends from the account balance alone.</p>';
  const left = c.budgetNano - key.usage.spentNano - key.usage.heldNano;
  const period = c.budgetPeriod === 'total' ? 'in total' : c.budgetPeriod === 'day' ? 'per day (UTC)' : 'per calendar month (UTC)';
  return `<dl class="figures"><div><dt>Budget</dt><dd>${esc(usd(c.budgetNano))} ${esc(period)}</dd></div>
<div><dt>Spent this period</dt><dd data-figure="spent">${esc(usd(key.usage.spentNano))}</dd></div>
<div><dt>Held for requests in flight</dt><dd data-figure="held">${esc(usd(key.usage.heldNano))}</dd></div>
<div><dt>Left</dt><dd data-figure="left">${esc(usd(left > 0n ? left : 0n))}</dd></div>
<div><dt>Period started</dt><dd>${esc(when(key.usage.periodStart))}</dd></div></dl>`;
}

function controlsForm(key: KeyDetails, csrf: string): string {
  const c = key.controls;
  const options = ['', ...BUDGET_PERIODS].map((p) => `<option value="${p}"${(c.budgetPeriod ?? '') === p ? ' selected' : ''}>${p === '' ? 'no budget' : p}</option>`).join('');
  return `<section aria-labelledby="controls-h"><h2 id="controls-h">Controls</h2><form method="post" action="/console/keys/${esc(key.id)}/controls">${csrfField(csrf)}
<label for="budget">Budget (USD)</label><input id="budget" name="budget" inputmode="decimal" value="${esc(c.budgetNano === null ? '' : formatUsd(c.budgetNano))}" placeholder="empty: no budget">
<label for="period">Budget period</label><select id="period" name="period">${options}</select>
<label for="models">Allowed models</label><input id="models" name="models" value="${esc((c.allowedModels ?? []).join(', '))}" placeholder="empty: every model; e.g. gpt-4o*, claude-haiku-4-5">
<label for="expires">Expires (UTC)</label><input id="expires" name="expires" type="datetime-local" value="${esc(localValue(c.expiresAt))}">
<p><button type="submit">Save controls</button></p></form></section>`;
}

function keyBody(key: KeyDetails, csrf: string, now: Date): string {
  const expired = key.controls.expiresAt !== null && key.controls.expiresAt.getTime() <= now.getTime();
  const state = key.revokedAt ? `Revoked ${when(key.revokedAt)}` : expired ? `Expired ${when(key.controls.expiresAt)}` : 'Live';
  const about = `<p><code>${esc(key.prefix ?? 'gw-')}…</code> · created ${esc(when(key.createdAt))} · <span data-state>${esc(state)}</span></p>`;
  const models = key.controls.allowedModels ? `<p>Allowed models: ${key.controls.allowedModels.map((m) => `<code>${esc(m)}</code>`).join(', ')}</p>` : '';
  return `${about}<section aria-labelledby="budget-h"><h2 id="budget-h">Budget</h2>${budgetSection(key)}</section>${models}${key.revokedAt ? '' : controlsForm(key, csrf)}<p><a href="/console/keys">Back to the key list</a></p>`;
}

/** The controls a posted form asks for (every field: empty clears it); a ConsoleRefusal names what is wrong. */
export function controlsFromForm(form: Form): KeyControls {
  const budget = (form.budget ?? '').trim();
  const period = (form.period ?? '').trim();
  let budgetNano: bigint | null = null;
  if (budget !== '') {
    try { budgetNano = parseUsd(budget); } catch { throw new ConsoleRefusal(400, 'Give the budget as a USD amount such as 5 or 0.25.'); }
    if (budgetNano < 0n) throw new ConsoleRefusal(400, 'A budget cannot be negative.');
  }
  if (period !== '' && !BUDGET_PERIODS.includes(period as BudgetPeriod)) throw new ConsoleRefusal(400, 'Choose a budget period: day, month or total.');
  if ((budgetNano === null) !== (period === '')) throw new ConsoleRefusal(400, 'A budget needs its period, and a period its budget.');
  const models = (form.models ?? '').split(/[\s,]+/).filter((m) => m !== '');
  if (models.length > MODELS_MAX || models.some((m) => m.length > 200)) throw new ConsoleRefusal(400, `List at most ${MODELS_MAX} models.`);
  const expires = (form.expires ?? '').trim();
  let expiresAt: Date | null = null;
  if (expires !== '') {
    expiresAt = new Date(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(expires) ? `${expires}:00Z` : 'invalid');
    if (Number.isNaN(expiresAt.getTime())) throw new ConsoleRefusal(400, 'Give the expiry as a date and time (UTC).');
  }
  return { budgetNano, budgetPeriod: budgetNano === null ? null : (period as BudgetPeriod), allowedModels: models.length ? [...new Set(models)] : null, expiresAt };
}

/** Messages after a redirect, by the `done` query value. */
const DONE: Readonly<Record<string, string>> = { saved: 'The controls were saved: they apply from the key\'s next request.' };

async function render(deps: ConsoleDeps, reply: FastifyReply, session: UserSession, keyId: string, done: string | undefined): Promise<void> {
  const now = deps.clock.now();
  const key = await deps.ledger.getKey(keyId, now, session.user.accountId);
  if (!key) throw new ConsoleRefusal(404, 'No such key on your account.');
  const flash = done && DONE[done] ? { kind: 'ok' as const, text: DONE[done]! } : null;
  await sendPage(reply, page(`Key ${key.name ?? '(unnamed)'}`, keyBody(key, session.csrfToken, now), { nav: { active: 'keys', csrf: session.csrfToken, who: session.user.email }, flash }));
}

/** Registers a key's page and its controls form. */
export function registerKeySettingsPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  scope.get('/console/keys/:id', async (req, reply) => {
    const session = await requireUser(deps, req, reply);
    if (!session) return;
    const done = (req.query as Record<string, unknown>).done;
    await render(deps, reply, session, (req.params as { id: string }).id, typeof done === 'string' ? done : undefined);
  });
  scope.post('/console/keys/:id/controls', async (req, reply) => {
    const session = await requireUser(deps, req, reply);
    if (!session) return;
    const form = formOf(req);
    checkSessionCsrf(session, form);
    const keyId = (req.params as { id: string }).id;
    const controls = controlsFromForm(form);
    await deps.ledger.updateKeyControls(keyId, controls, session.user.accountId).catch((error: unknown) => {
      if (error instanceof LedgerError && error.code === 'not_found') throw new ConsoleRefusal(404, 'No such key on your account.');
      throw error;
    });
    deps.auth.clear();
    deps.log('console key controls changed', { account_id: session.user.accountId, key_id: keyId });
    await redirect(reply, `/console/keys/${encodeURIComponent(keyId)}?done=saved`);
  });
}
