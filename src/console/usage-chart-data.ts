/**
 * The usage page's spend-over-time data (issue 13 item 3): daily spend per capability (usage row kind)
 * and per model, as the page embeds it for usage-chart.js (Chart.js) and renders it as tables for
 * readers without JavaScript. Exact amounts travel as nano-dollar strings; `usd` numbers are floats
 * for drawing only and are never shown as the amount.
 */
import type { DailySpend } from './account-data.js';

/** One stacked series: a capability or a model, one value per day of `days`. */
export interface SpendSeries { name: string; nano: string[]; usd: number[] }

/** What the page embeds in <script type="application/json" id="spend-data">. */
export interface SpendData { days: string[]; byCapability: SpendSeries[]; byModel: SpendSeries[]; totalNano: string[] }

/** Longest run of days filled in between the first and last day with spend (about two years). */
const FILL_MAX_DAYS = 731;

const DAY_MS = 86_400_000;

/** The days of the chart: every day from the first to the last with spend, or just those if far apart. */
function chartDays(points: DailySpend[]): string[] {
  const seen = [...new Set(points.map((p) => p.day))].sort();
  if (seen.length < 2) return seen;
  const first = Date.parse(`${seen[0]}T00:00:00Z`);
  const last = Date.parse(`${seen[seen.length - 1]}T00:00:00Z`);
  const span = Math.round((last - first) / DAY_MS) + 1;
  if (!Number.isFinite(span) || span > FILL_MAX_DAYS) return seen;
  return Array.from({ length: span }, (_, i) => new Date(first + i * DAY_MS).toISOString().slice(0, 10));
}

function series(points: DailySpend[], days: string[], nameOf: (p: DailySpend) => string): SpendSeries[] {
  const index = new Map(days.map((d, i) => [d, i]));
  const sums = new Map<string, bigint[]>();
  for (const p of points) {
    const name = nameOf(p);
    const row = sums.get(name) ?? days.map(() => 0n);
    const at = index.get(p.day)!;
    row[at] = (row[at] ?? 0n) + p.amountNano;
    sums.set(name, row);
  }
  return [...sums.keys()].sort().map((name) => {
    const row = sums.get(name)!;
    return { name, nano: row.map(String), usd: row.map((n) => Number(n) / 1e9) };
  });
}

/** Builds the chart data from the daily totals of the filtered rows. */
export function spendData(points: DailySpend[]): SpendData {
  const days = chartDays(points);
  const byCapability = series(points, days, (p) => p.kind);
  const totals = days.map((_, i) => byCapability.reduce((sum, s) => sum + BigInt(s.nano[i]!), 0n));
  return { days, byCapability, byModel: series(points, days, (p) => p.model), totalNano: totals.map(String) };
}

/** The data as JSON safe inside a <script> element: `<`, `>` and `&` escaped as \u sequences. */
export function embedJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');
}
