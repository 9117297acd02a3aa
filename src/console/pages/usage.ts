/**
 * The usage and balance page (issue 13 item 3): the account's balance, held amount, credit and what is
 * available, its top-ups, its usage rows under filters (key, model, capability, date range: a GET form,
 * so it works without JavaScript), a spend-over-time chart per capability and per model (Chart.js from
 * the gateway's own assets, drawn by usage-chart.js from JSON embedded in the page; the same daily
 * totals as tables for readers without JavaScript), and the CSV export of the filtered rows. Every
 * query is scoped to the session's account: no filter value reaches another account's rows.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { UsageRow } from '../../ledger/types.js';
import { dailySpend, listKeys, listTopups, listUsageRows, usageFacets, type KeyListing, type TopupListing } from '../account-data.js';
import { ConsoleRefusal, requireUser, sendPage, type ConsoleDeps, type UserSession } from '../context.js';
import { esc, page, usd, when } from '../html.js';
import { embedJson, spendData, type SpendData, type SpendSeries } from '../usage-chart-data.js';
import { usageCsv } from '../usage-csv.js';
import { parseUsageQuery, queryString, type UsageQuery } from '../usage-query.js';
import { asUserSees } from '../../ledger/types.js';

/** Most usage rows the page lists (the CSV has all of them). */
export const PAGE_ROWS = 200;

const SCRIPTS = ['/console/assets/chart.umd.min.js', '/console/assets/usage-chart.js'];

/** The money figures (spec: balance is spendable, open holds already taken off it). */
async function balanceSection(deps: ConsoleDeps, accountId: string): Promise<string> {
  const stored = await deps.ledger.getAccount(accountId);
  if (!stored) throw new ConsoleRefusal(404, 'Your account was not found.');
  // Grants are the gateway's own headroom (issue 30): their unspent part is still the user's balance.
  const account = asUserSees(stored);
  // balanceNano already excludes held money (ledger holds move it to heldNano), so adding the credit
  // limit gives what new requests can spend; subtracting heldNano again would count holds twice.
  const available = account.balanceNano + account.creditLimitNano;
  const figure = (id: string, label: string, nano: bigint, note: string): string =>
    `<div class="card"><h2 id="${id}-h">${label}</h2><p class="figure" id="${id}">${esc(usd(nano))}</p><p class="muted">${note}</p></div>`;
  return `<section aria-label="Balance"><div class="grid">${[
    figure('balance', 'Balance', account.balanceNano, 'After amounts held for requests in flight.'),
    figure('held', 'Held', account.heldNano, `Held for ${account.openHolds} request${account.openHolds === 1 ? '' : 's'} in flight; settled to the exact cost when each ends.`),
    figure('credit', 'Credit limit', account.creditLimitNano, 'How far the balance may go below zero.'),
    figure('available', 'Available', available, 'Balance plus credit limit: what new requests can spend.'),
  ].join('')}</div></section>`;
}

function keyLabel(key: KeyListing): string {
  return `${key.name ?? '(unnamed)'} (${key.prefix ?? 'gw-'}…)${key.revokedAt ? ' (revoked)' : ''}`;
}

function select(id: string, label: string, all: string, choices: Array<[string, string]>, current: string): string {
  const options = choices.map(([value, text]) => `<option value="${esc(value)}"${value === current ? ' selected' : ''}>${esc(text)}</option>`).join('');
  return `<div><label for="${id}">${label}</label><select id="${id}" name="${id.slice(2)}"><option value="">${all}</option>${options}</select></div>`;
}

function filterForm(q: UsageQuery, keys: KeyListing[], facets: { models: string[]; kinds: string[] }): string {
  const date = (name: 'from' | 'to', label: string): string =>
    `<div><label for="f-${name}">${label}</label><input id="f-${name}" name="${name}" type="date" value="${esc(q.text[name])}"${q.error && q.text[name] ? ' aria-invalid="true"' : ''}></div>`;
  return `<section aria-labelledby="filters-h"><h2 id="filters-h">Filter usage</h2><form method="get" action="/console/usage" role="search"><div class="grid">
${select('f-key', 'Key', 'All keys', keys.map((k) => [k.id, keyLabel(k)]), q.text.key)}
${select('f-model', 'Model', 'All models', facets.models.map((m) => [m, m]), q.text.model)}
${select('f-capability', 'Capability', 'All capabilities', facets.kinds.map((k) => [k, k]), q.text.capability)}
${date('from', 'From (UTC day)')}${date('to', 'To (UTC day, inclusive)')}</div>
<p class="actions"><button type="submit">Apply filters</button><a href="/console/usage">Clear filters</a><a id="csv-link" href="/console/usage.csv${esc(queryString(q.text))}" download>Download CSV of these rows</a></p></form></section>`;
}

function dailyTable(caption: string, data: SpendData, series: SpendSeries[]): string {
  const head = series.map((s) => `<th scope="col" class="num">${esc(s.name)}</th>`).join('');
  const rows = data.days.map((day, i) => `<tr><th scope="row">${esc(day)}</th>${series.map((s) => `<td class="num">${esc(usd(BigInt(s.nano[i]!)))}</td>`).join('')}<td class="num">${esc(usd(BigInt(data.totalNano[i]!)))}</td></tr>`).join('');
  return `<div class="table"><table><caption class="muted">${esc(caption)}</caption><thead><tr><th scope="col">Day (UTC)</th>${head}<th scope="col" class="num">Total</th></tr></thead><tbody>${rows}</tbody></table></div>`;
}

function chartSection(data: SpendData): string {
  if (!data.days.length) return '<section aria-labelledby="chart-h"><h2 id="chart-h">Spend over time</h2><p>No spend in this selection.</p></section>';
  const figure = (id: 'byCapability' | 'byModel', title: string, series: SpendSeries[]): string =>
    `<figure><figcaption><h3 id="${id}-h">${title}</h3></figcaption><div class="chart"><canvas id="chart-${id}" data-series="${id}" role="img" aria-label="${esc(`${title}: stacked bars of daily spend in US dollars, ${data.days[0]} to ${data.days[data.days.length - 1]}. The table below has the same figures.`)}"></canvas></div>
<details><summary>Daily totals ${title.toLowerCase()} as a table</summary>${dailyTable(title, data, series)}</details></figure>`;
  return `<section aria-labelledby="chart-h"><h2 id="chart-h">Spend over time</h2><script type="application/json" id="spend-data">${embedJson(data)}</script>
${figure('byCapability', 'By capability', data.byCapability)}${figure('byModel', 'By model', data.byModel)}</section>`;
}

/** The deployment that served a row (issue 29 item 7), or a dash for rows none served. */
function deploymentCell(deployment: string | null): string {
  return deployment ? `<code>${esc(deployment)}</code>` : '—';
}

function rowsSection(rows: UsageRow[], keys: KeyListing[], csvHref: string): string {
  const byId = new Map(keys.map((k) => [k.id, k]));
  const shown = rows.slice(0, PAGE_ROWS);
  const keyCell = (id: string | null): string => {
    const key = id ? byId.get(id) : undefined;
    return key ? `${esc(key.name ?? '(unnamed)')} <code>${esc(key.prefix ?? 'gw-')}…</code>` : '—';
  };
  const body = shown.map((r) => `<tr data-usage-id="${esc(r.id)}"><td>${esc(when(r.createdAt))}</td><td>${keyCell(r.keyId)}</td><td><code>${esc(r.model)}</code></td><td>${deploymentCell(r.deployment)}</td><td>${esc(r.kind)}</td><td class="num">${esc(r.quantity.toString())} ${esc(r.unit)}</td><td class="num">${esc(usd(r.amountNano))}</td><td><code>${esc(r.requestId)}</code></td></tr>`).join('');
  const more = rows.length > PAGE_ROWS ? `<p class="muted" id="rows-capped">Showing the newest ${PAGE_ROWS} matching rows; more match. <a href="${esc(csvHref)}">The CSV export</a> has all of them.</p>` : '';
  const table = shown.length
    ? `${more}<div class="table"><table><caption class="muted">Newest first. Amounts in US dollars, exact.</caption><thead><tr><th scope="col">Time</th><th scope="col">Key</th><th scope="col">Model</th><th scope="col">Deployment</th><th scope="col">Capability</th><th scope="col" class="num">Quantity</th><th scope="col" class="num">Amount</th><th scope="col">Request id</th></tr></thead><tbody>${body}</tbody></table></div>`
    : '<p id="no-rows">No usage rows match these filters.</p>';
  return `<section aria-labelledby="rows-h"><h2 id="rows-h">Usage rows</h2>${table}</section>`;
}

function topupsSection(topups: TopupListing[]): string {
  const rows = topups.map((t) => `<tr data-topup-id="${esc(t.id)}"><td>${esc(when(t.createdAt))}</td><td class="num">${esc(usd(t.amountNano))}</td></tr>`).join('');
  const table = topups.length
    ? `<div class="table"><table><caption class="muted">Newest first (the last 100).</caption><thead><tr><th scope="col">Time</th><th scope="col" class="num">Amount</th></tr></thead><tbody>${rows}</tbody></table></div>`
    : '<p>No top-ups yet.</p>';
  return `<section aria-labelledby="topups-h"><h2 id="topups-h">Top-ups</h2>${table}</section>`;
}

async function renderUsage(deps: ConsoleDeps, reply: FastifyReply, session: UserSession, q: UsageQuery): Promise<void> {
  const accountId = session.user.accountId;
  const [balance, keys, facets, topups] = [await balanceSection(deps, accountId), await listKeys(deps.db, accountId, deps.clock.now()), await usageFacets(deps.db, accountId), await listTopups(deps.db, accountId)];
  let results = '';
  if (!q.error) {
    const rows = await listUsageRows(deps.db, accountId, q.filter, PAGE_ROWS + 1);
    const chart = spendData(await dailySpend(deps.db, accountId, q.filter));
    results = chartSection(chart) + rowsSection(rows, keys, `/console/usage.csv${queryString(q.text)}`);
  }
  const body = balance + filterForm(q, keys, facets) + results + topupsSection(topups);
  const flash = q.error ? { kind: 'error' as const, text: q.error } : null;
  const html = page('Usage and balance', body, { nav: { active: 'usage', csrf: session.csrfToken, who: session.user.email }, flash, scripts: SCRIPTS });
  await sendPage(reply, html, q.error ? 400 : 200);
}

/** The export's file name: usage-<from>-<to>.csv, `start` for no lower bound and today for no upper. */
function csvName(q: UsageQuery, now: Date): string {
  return `usage-${q.text.from || 'start'}-${q.text.to || now.toISOString().slice(0, 10)}.csv`;
}

async function sendCsv(deps: ConsoleDeps, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const session = await requireUser(deps, req, reply);
  if (!session) return;
  const q = parseUsageQuery(req.query);
  if (q.error) throw new ConsoleRefusal(400, q.error);
  const keys = await listKeys(deps.db, session.user.accountId, deps.clock.now());
  await reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${csvName(q, deps.clock.now())}"`)
    .header('cache-control', 'no-store').send(usageCsv(deps.db, session.user.accountId, q.filter, keys));
}

/** Registers GET /console/usage and GET /console/usage.csv. */
export function registerUsagePages(scope: FastifyInstance, deps: ConsoleDeps): void {
  scope.get('/console/usage', async (req, reply) => {
    const session = await requireUser(deps, req, reply);
    if (!session) return;
    await renderUsage(deps, reply, session, parseUsageQuery(req.query));
  });
  scope.get('/console/usage.csv', (req, reply) => sendCsv(deps, req, reply));
}
