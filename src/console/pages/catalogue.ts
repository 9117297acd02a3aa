/**
 * The catalogue page (issue 13 item 4): the live catalogue (the same offerings GET /api/public/catalog
 * lists), searchable by a query over id, service type and unit, with each offering's unit and prices.
 * Open to anyone signed in (user or operator); the search works without JavaScript (a GET form).
 */
import type { FastifyInstance } from 'fastify';
import { catalogBody } from '../../server/catalog.js';
import { sendPage, sessionOf, redirect, type ConsoleDeps } from '../context.js';
import { esc, page } from '../html.js';

/** One catalogue entry as GET /api/public/catalog shows it (the fields this page reads). */
interface Entry { id: string; service_type?: string; availability?: string; billing?: Record<string, unknown> }

/**
 * An entry's prices in words, from its billing object: "input $2.50 · output $10.00 per 1000000
 * tokens", or "$10.00 per 1000000 characters"; a built-in tool's price (web_search) is per call; each
 * priced variant with its request values.
 */
function prices(billing: Record<string, unknown> | undefined): string {
  if (!billing) return '—';
  const table = billing.prices && typeof billing.prices === 'object' ? billing.prices as Record<string, unknown> : {};
  const named = Object.entries(table).filter(([, v]) => typeof v === 'string').map(([k, v]) => (k === 'price' ? `$${String(v)}` : `${k.replace(/_/g, ' ')} $${String(v)}`));
  named.push(...variantPrices(billing.variants));
  return named.length ? `${named.join(' · ')} per ${String(billing.per ?? 1)} ${String(billing.unit ?? 'unit').replace(/_/g, ' ')}s` : '—';
}

/** Priced variants (issue 31 item 8) in words: "quality hd, size 1024x1792 $0.12". */
function variantPrices(variants: unknown): string[] {
  if (!Array.isArray(variants)) return [];
  return variants.map((v: { when?: Record<string, unknown>; price?: unknown }) => `${Object.entries(v.when ?? {}).map(([k, x]) => `${k} ${String(x)}`).join(', ')} $${String(v.price)}`);
}

/** Registers GET /console/catalogue. */
export function registerCataloguePage(scope: FastifyInstance, deps: ConsoleDeps): void {
  scope.get('/console/catalogue', async (req, reply) => {
    const session = await sessionOf(deps, req);
    if (!session) return redirect(reply, '/console');
    const raw = (req.query as Record<string, unknown>).q;
    const q = typeof raw === 'string' ? raw.trim().toLowerCase().slice(0, 100) : '';
    const entries = ((catalogBody(deps.gateway()) as { data?: Entry[] }).data ?? [])
      .filter((e) => !q || [e.id, e.service_type, e.billing?.unit].some((v) => String(v ?? '').toLowerCase().includes(q)));
    const rows = entries.map((e) => `<tr><td><code>${esc(e.id)}</code></td><td>${esc(e.service_type)}</td><td>${esc(e.availability)}</td><td>${esc(e.billing?.unit)}</td><td>${esc(prices(e.billing))}</td></tr>`).join('');
    const body = `<section><form method="get" action="/console/catalogue" role="search"><label for="q">Search offerings</label><input id="q" name="q" type="search" value="${esc(q)}" placeholder="model id, service type or unit"><p><button type="submit">Search</button></p></form></section>
<section><p class="muted">${entries.length} offering${entries.length === 1 ? '' : 's'}${q ? ` matching “${esc(q)}”` : ''}. Prices in US dollars.</p><div class="table"><table><thead><tr><th scope="col">Model</th><th scope="col">Service type</th><th scope="col">Availability</th><th scope="col">Unit</th><th scope="col">Prices</th></tr></thead><tbody>${rows}</tbody></table></div></section>`;
    const who = session.user?.email ?? 'operator';
    await sendPage(reply, page('Catalogue', body, { nav: { active: 'catalogue', csrf: session.csrfToken, who, operator: !session.user && session.operator } }));
  });
}
