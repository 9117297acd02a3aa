/**
 * The usage page's filters (issue 13 item 3) as the GET form sends them (the query names listed in
 * console/pages.yaml): key, model, capability (a usage row's `kind`) and a from/to date range (UTC days, `to` inclusive). The same query drives the
 * page and its CSV export. Choices need not be valid: a key, model or capability the account has no
 * rows for simply matches nothing (every query is scoped to the session's account); only a malformed
 * date is an error, since it cannot mean anything.
 */
import type { UsageFilter } from './account-data.js';

/** The filter fields as given (for re-filling the form and building links). */
export interface UsageQueryText { key: string; model: string; capability: string; from: string; to: string }

/** A parsed query: the filter, the text it came from, and a message when a date is malformed. */
export interface UsageQuery { filter: UsageFilter; text: UsageQueryText; error: string | null }

/** Longest filter value kept (longer ones are cut: they match nothing either way). */
const VALUE_MAX = 200;

function field(query: Record<string, unknown>, name: string): string {
  const value = query[name];
  const text = typeof value === 'string' ? value : Array.isArray(value) && typeof value[0] === 'string' ? value[0] : '';
  return text.trim().slice(0, VALUE_MAX);
}

/** A `YYYY-MM-DD` calendar date (as <input type="date"> sends it) at 00:00 UTC, or null if malformed. */
export function parseDay(text: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1970) return null;
  const at = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC rolls 2026-02-30 over to March: a day that does not exist is malformed.
  return at.getUTCFullYear() === year && at.getUTCMonth() === month - 1 && at.getUTCDate() === day ? at : null;
}

/** Reads the page's query string into a filter. */
export function parseUsageQuery(query: unknown): UsageQuery {
  const q = query && typeof query === 'object' ? (query as Record<string, unknown>) : {};
  const text: UsageQueryText = { key: field(q, 'key'), model: field(q, 'model'), capability: field(q, 'capability'), from: field(q, 'from'), to: field(q, 'to') };
  const filter: UsageFilter = {};
  if (text.key) filter.keyId = text.key;
  if (text.model) filter.model = text.model;
  if (text.capability) filter.kind = text.capability;
  const errors: string[] = [];
  for (const name of ['from', 'to'] as const) {
    if (!text[name]) continue;
    const day = parseDay(text[name]);
    if (day) filter[name] = day;
    else errors.push(`The “${name}” date “${text[name]}” is not a date: use YYYY-MM-DD, e.g. 2026-11-24.`);
  }
  return { filter, text, error: errors.length ? errors.join(' ') : null };
}

/** The query string of a filter's text (for the CSV link), empty fields left out. */
export function queryString(text: UsageQueryText): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(text)) if (value) params.set(name, value);
  const out = params.toString();
  return out ? `?${out}` : '';
}
