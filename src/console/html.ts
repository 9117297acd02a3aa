/**
 * The console's HTML (issue 13): server-rendered pages with one stylesheet and, where it helps, one
 * small script, both served by the gateway (no asset from the internet). Every value is escaped; the
 * pages work without JavaScript for the key actions (forms post and redirect).
 */
import { formatUsd } from '../money.js';

/** Escapes text for HTML element content and quoted attribute values. */
export function esc(value: unknown): string {
  return String(value ?? '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A nano-dollar amount as the console shows it: `$1.234567890`, trailing zeros trimmed to cents. */
export function usd(nano: bigint): string {
  const text = formatUsd(nano);
  const [whole, fraction = ''] = text.replace(/^-/, '').split('.');
  const trimmed = fraction.replace(/0+$/, '').padEnd(2, '0');
  return `${text.startsWith('-') ? '-' : ''}$${whole}.${trimmed}`;
}

/** A timestamp as `2026-11-24 13:45 UTC`, or a dash. */
export function when(at: Date | null | undefined): string {
  return at ? `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC` : '—';
}

/** A hidden CSRF field for a form. */
export function csrfField(token: string): string {
  return `<input type="hidden" name="csrf" value="${esc(token)}">`;
}

/** Navigation of a signed-in page. */
export interface Nav { active: 'keys' | 'usage' | 'catalogue' | 'operator' | null; csrf: string; who: string; operator?: boolean }

function navBar(nav: Nav): string {
  const links = nav.operator
    ? [['operator', '/console/operator', 'Accounts'], ['catalogue', '/console/catalogue', 'Catalogue']]
    : [['keys', '/console/keys', 'Keys'], ['usage', '/console/usage', 'Usage and balance'], ['catalogue', '/console/catalogue', 'Catalogue']];
  const items = links.map(([id, href, label]) => `<li><a href="${href}"${nav.active === id ? ' aria-current="page"' : ''}>${label}</a></li>`).join('');
  const signout = `<form method="post" action="${nav.operator ? '/console/operator/signout' : '/console/signout'}" class="inline">${csrfField(nav.csrf)}<button type="submit" class="link">Sign out</button></form>`;
  return `<header><nav aria-label="Console"><a class="brand" href="/console">AI Gateway</a><ul>${items}</ul><span class="who">${esc(nav.who)}</span>${signout}</nav></header>`;
}

/** A whole page: the layout, the navigation (when signed in), a flash message, the body. */
export function page(title: string, body: string, opts: { nav?: Nav; flash?: { kind: 'ok' | 'error'; text: string } | null; scripts?: string[] } = {}): string {
  const flash = opts.flash ? `<p class="flash ${opts.flash.kind}" role="${opts.flash.kind === 'error' ? 'alert' : 'status'}">${esc(opts.flash.text)}</p>` : '';
  const scripts = (opts.scripts ?? []).map((src) => `<script src="${esc(src)}" defer></script>`).join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · AI Gateway console</title><link rel="stylesheet" href="/console/assets/console.css">${scripts}</head>
<body>${opts.nav ? navBar(opts.nav) : ''}<main><h1>${esc(title)}</h1>${flash}${body}</main></body></html>`;
}
