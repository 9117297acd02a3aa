/**
 * The usage page's CSV export (issue 13 item 3): every usage row of the session's account under the
 * page's filters, newest first, read in pages of 1000 rows (keyset on the row id, so each page is one
 * index range) and streamed. Amounts are exact decimal USD (formatUsd). Text fields are escaped per
 * RFC 4180 (quoted when needed, quotes doubled) and defused against spreadsheet formulas: a text field
 * starting with = + - @ (or tab / carriage return, OWASP's list) gets a leading single quote. Numbers
 * the gateway writes itself (quantity, amount_usd, which is negative for a refund) are left as numbers.
 * Columns are positional: a new one is appended last (`deployment`, issue 29 item 7, empty when no
 * deployment served the row), so a consumer reading the earlier ones by position keeps working.
 *
 * At most EXPORT_CAP rows are written; when more match, the file ends with one comment line starting
 * with `#` saying so (narrow the date range to export the rest), rather than a silently short file.
 */
import { Readable } from 'node:stream';
import type { UsageRow } from '../ledger/types.js';
import { formatUsd } from '../money.js';
import type { Db } from '../store/db.js';
import { listUsageRows, type KeyListing, type UsageFilter } from './account-data.js';

/** Rows read per query. */
export const EXPORT_PAGE = 1000;

/** Most rows in one export. */
export const EXPORT_CAP = 100_000;

/** The header row. */
export const CSV_HEADER = 'id,created_at,key_id,key_name,model,capability,quantity,unit,amount_usd,request_id,deployment';

/** One text field: formula-defused, then quoted if it holds a comma, quote or line break. */
export function csvText(value: string | null | undefined): string {
  let text = value ?? '';
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One usage row as a CSV line (with its line break). */
export function csvLine(row: UsageRow, keyName: string | null): string {
  const fields = [
    csvText(row.id), csvText(row.createdAt.toISOString()), csvText(row.keyId), csvText(keyName), csvText(row.model), csvText(row.kind),
    row.quantity.toString(), csvText(row.unit), formatUsd(row.amountNano), csvText(row.requestId), csvText(row.deployment),
  ];
  return `${fields.join(',')}\r\n`;
}

/** The export's lines: the header, then the rows page by page, then the cap note if capped. */
async function* csvLines(db: Db, accountId: string, filter: UsageFilter, keys: KeyListing[]): AsyncGenerator<string> {
  const names = new Map(keys.map((k) => [k.id, k.name]));
  yield `${CSV_HEADER}\r\n`;
  let written = 0;
  let cursor: string | null = null;
  for (;;) {
    const want = Math.min(EXPORT_PAGE, EXPORT_CAP - written);
    const rows = await listUsageRows(db, accountId, { ...filter, beforeId: cursor ?? undefined }, want + (want < EXPORT_PAGE ? 1 : 0));
    const page = rows.slice(0, want);
    if (page.length) yield page.map((r) => csvLine(r, r.keyId ? names.get(r.keyId) ?? null : null)).join('');
    written += page.length;
    if (rows.length > want && written >= EXPORT_CAP) {
      yield `# capped at ${EXPORT_CAP} rows: more rows match; narrow the date range to export the rest\r\n`;
      return;
    }
    if (page.length < EXPORT_PAGE) return;
    cursor = page[page.length - 1]!.id;
  }
}

/** The export as a stream of CSV text. */
export function usageCsv(db: Db, accountId: string, filter: UsageFilter, keys: KeyListing[]): Readable {
  return Readable.from(csvLines(db, accountId, filter, keys));
}
