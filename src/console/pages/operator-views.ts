/**
 * The operator view's HTML (issue 13 item 5): the admin-token sign-in form, the accounts table, one
 * account (balances, top-up form, top-ups, usage rows with refund buttons), the reconcile status and
 * the development outbox. Every value is escaped; every amount goes through usd() (exact nano-USD).
 */
import type { ReconcileLine, UsageRow } from '../../ledger/types.js';
import type { OutboxEntry } from '../mail.js';
import type { TopupListing } from '../account-data.js';
import { csrfField, esc, usd, when } from '../html.js';
import type { AccountListing } from './operator-data.js';

/** The operator's pages, for the sub-navigation. */
export type OperatorTab = 'accounts' | 'reconcile' | 'outbox';

/** The sign-in form: one field, the admin token. */
export function signinBody(csrf: string): string {
  return `<section aria-labelledby="op-signin-h"><h2 id="op-signin-h">Operator sign-in</h2>
<form method="post" action="/console/operator/signin">${csrfField(csrf)}
<label for="admin-token">Admin token</label><input id="admin-token" name="token" type="password" required autocomplete="off" aria-describedby="op-hint">
<p id="op-hint" class="muted">The gateway's admin token (GATEWAY_ADMIN_TOKEN). Account holders sign in at <a href="/console">the console</a>.</p>
<p><button type="submit">Sign in as operator</button></p></form></section>`;
}

/** Links between the operator's pages (the outbox only with the development mail transport). */
export function subnav(active: OperatorTab | null, outbox: boolean): string {
  const tabs: Array<[OperatorTab, string, string]> = [['accounts', '/console/operator', 'Accounts'], ['reconcile', '/console/operator/reconcile', 'Reconcile']];
  if (outbox) tabs.push(['outbox', '/console/operator/outbox', 'Outbox']);
  const items = tabs.map(([id, href, label]) => `<li><a href="${href}"${active === id ? ' aria-current="page"' : ''}>${label}</a></li>`).join('');
  return `<nav aria-label="Operator" class="subnav"><ul>${items}</ul></nav>`;
}

function accountRow(a: AccountListing): string {
  return `<tr data-account-id="${esc(a.id)}"><td><a href="/console/operator/accounts/${encodeURIComponent(a.id)}"><code>${esc(a.id)}</code></a></td><td>${esc(a.email ?? '—')}</td>`
    + `<td class="num">${esc(usd(a.balanceNano))}</td><td class="num">${esc(usd(a.creditLimitNano))}</td><td class="num">${esc(usd(a.heldNano))}</td>`
    + `<td class="num">${a.openHolds}</td><td>${esc(when(a.createdAt))}</td></tr>`;
}

/** The accounts table with its search form. */
export function accountsBody(accounts: AccountListing[], total: number, search: string): string {
  const form = `<form method="get" action="/console/operator" role="search"><label for="op-q">Find an account</label><input id="op-q" name="q" type="search" value="${esc(search)}" placeholder="account id or email"><p><button type="submit">Search</button></p></form>`;
  const shown = `${accounts.length === total ? total : `${accounts.length} newest of ${total}`} account${total === 1 ? '' : 's'}${search ? ` matching “${esc(search)}”` : ''}. Balance is spendable: open holds are taken off it.`;
  const table = accounts.length
    ? `<div class="table"><table><caption class="muted">${shown}</caption><thead><tr><th scope="col">Account</th><th scope="col">Console email</th><th scope="col" class="num">Balance</th><th scope="col" class="num">Credit limit</th><th scope="col" class="num">Held</th><th scope="col" class="num">Open holds</th><th scope="col">Created</th></tr></thead><tbody>${accounts.map(accountRow).join('')}</tbody></table></div>`
    : `<p>${search ? 'No account matches.' : 'No accounts yet.'}</p>`;
  return `<section>${form}</section><section aria-labelledby="accounts-h"><h2 id="accounts-h">Accounts</h2>${table}</section>`;
}

function figures(a: AccountListing): string {
  const item = (label: string, value: string): string => `<div><p class="muted">${label}</p><p class="figure">${esc(value)}</p></div>`;
  return `<section aria-label="Balances"><div class="grid">${item('Balance (spendable)', usd(a.balanceNano))}${item('Held by open requests', usd(a.heldNano))}${item('Credit limit', usd(a.creditLimitNano))}${item('Open holds', String(a.openHolds))}</div>
<p class="muted">Console email: ${esc(a.email ?? 'none (made through the admin API)')} · created ${esc(when(a.createdAt))}</p></section>`;
}

function topupSection(a: AccountListing, topups: TopupListing[], csrf: string): string {
  const rows = topups.map((t) => `<tr><td>${esc(when(t.createdAt))}</td><td class="num">${esc(usd(t.amountNano))}</td><td><code>${esc(t.id)}</code></td></tr>`).join('');
  const table = topups.length
    ? `<div class="table"><table><thead><tr><th scope="col">When</th><th scope="col" class="num">Amount</th><th scope="col">Top-up</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : '<p>No top-ups yet.</p>';
  return `<section aria-labelledby="topup-h"><h2 id="topup-h">Top up</h2><form method="post" action="/console/operator/accounts/${encodeURIComponent(a.id)}/topup">${csrfField(csrf)}
<label for="topup-amount">Amount in US dollars</label><input id="topup-amount" name="amount" required inputmode="decimal" pattern="\\d+(\\.\\d{1,9})?" placeholder="e.g. 25 or 10.50" aria-describedby="topup-hint">
<p id="topup-hint" class="muted">A positive amount with at most 9 decimals; it is added to the balance at once.</p>
<p><button type="submit">Add to balance</button></p></form><h3>Top-ups</h3>${table}</section>`;
}

function usageRow(row: UsageRow, refunded: boolean, csrf: string): string {
  const action = row.refundOf !== null
    ? `<span class="muted">Refund of <code>${esc(row.refundOf)}</code></span>`
    : refunded
      ? '<span class="muted">Refunded</span>'
      : `<form method="post" action="/console/operator/usage/${encodeURIComponent(row.id)}/refund">${csrfField(csrf)}<button type="submit" class="danger" aria-label="Refund usage row ${esc(row.id)}">Refund</button></form>`;
  return `<tr data-row-id="${esc(row.id)}"><td>${esc(when(row.createdAt))}</td><td>${esc(row.model)}</td><td><code>${esc(row.deployment ?? '—')}</code></td><td>${esc(row.kind)}</td><td class="num">${esc(row.quantity)} ${esc(row.unit)}</td>`
    + `<td class="num">${esc(usd(row.amountNano))}</td><td><code>${esc(row.keyId ?? '—')}</code></td><td><code>${esc(row.id)}</code></td><td>${action}</td></tr>`;
}

function usageSection(rows: UsageRow[], refunded: Set<string>, csrf: string): string {
  const table = rows.length
    ? `<div class="table"><table><caption class="muted">The latest ${rows.length} rows, newest first. A refund gives the row's amount back, once.</caption><thead><tr><th scope="col">When</th><th scope="col">Model</th><th scope="col">Deployment</th><th scope="col">Capability</th><th scope="col" class="num">Quantity</th><th scope="col" class="num">Amount</th><th scope="col">Key</th><th scope="col">Row</th><th scope="col">Refund</th></tr></thead><tbody>${rows.map((r) => usageRow(r, refunded.has(r.id), csrf)).join('')}</tbody></table></div>`
    : '<p>No usage yet.</p>';
  return `<section aria-labelledby="usage-h"><h2 id="usage-h">Usage</h2>${table}</section>`;
}

/** One account: balances, the top-up form and history, the latest usage rows with refunds. */
export function accountBody(a: AccountListing, topups: TopupListing[], rows: UsageRow[], refunded: Set<string>, csrf: string): string {
  return `${figures(a)}${topupSection(a, topups, csrf)}${usageSection(rows, refunded, csrf)}<p><a href="/console/operator">All accounts</a></p>`;
}

/** The reconcile status: ok, or the accounts whose books differ with each term. */
export function reconcileBody(lines: ReconcileLine[]): string {
  const off = lines.filter((l) => l.differenceNano !== 0n);
  const rule = '<p class="muted">Per account: opening balance + top-ups − balance = usage − refunds + open holds.</p>';
  if (off.length === 0) return `<section aria-labelledby="rec-h"><h2 id="rec-h">Reconcile</h2><p class="status-ok" role="status"><strong>OK</strong>: the books of all ${lines.length} account${lines.length === 1 ? '' : 's'} balance.</p>${rule}</section>`;
  const cells = (l: ReconcileLine): string => [l.openingNano, l.topupsNano, l.balanceNano, l.usageNano, l.refundsNano, l.openHoldsNano, l.differenceNano].map((n) => `<td class="num">${esc(usd(n))}</td>`).join('');
  const rows = off.map((l) => `<tr><td><a href="/console/operator/accounts/${encodeURIComponent(l.accountId)}"><code>${esc(l.accountId)}</code></a></td>${cells(l)}</tr>`).join('');
  const head = ['Opening', 'Top-ups', 'Balance', 'Usage', 'Refunds', 'Open holds', 'Difference'].map((h) => `<th scope="col" class="num">${h}</th>`).join('');
  return `<section aria-labelledby="rec-h"><h2 id="rec-h">Reconcile</h2><p class="status-bad" role="alert"><strong>Not OK</strong>: ${off.length} of ${lines.length} accounts differ.</p>${rule}
<div class="table"><table><thead><tr><th scope="col">Account</th>${head}</tr></thead><tbody>${rows}</tbody></table></div></section>`;
}

/** The development outbox, newest first. */
export function outboxBody(entries: readonly OutboxEntry[]): string {
  const items = [...entries].reverse().map((m) => `<article class="mail"><h3>${esc(m.subject)}</h3><p class="muted">To ${esc(m.to)} · ${esc(when(new Date(m.sentAt)))}</p><pre>${esc(m.text)}</pre></article>`).join('');
  return `<section aria-labelledby="outbox-h"><h2 id="outbox-h">Outbox</h2><p class="muted">No SMTP_URL is set: mail the console sends is kept here (the latest 200) and written to the log, not delivered.</p>${items || '<p>No mail yet.</p>'}</section>`;
}
