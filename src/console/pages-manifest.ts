/**
 * console/pages.yaml (issue 13 item 6): the console's pages and session routes as data, read by
 * codegen (the OpenAPI document) and by the test that checks it against the registered routes. A
 * malformed entry is an error naming the file and the entry.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'yaml';

/** Who may open a page. */
export type PageSession = 'none' | 'user' | 'operator' | 'any';
/** What a page answers. */
export type PageAnswer = 'html' | 'redirect' | 'csv';

/** One page or session route. */
export interface ConsolePage {
  method: 'GET' | 'POST'; path: string; session: PageSession; summary: string; answers: PageAnswer[];
  form?: string[]; query?: string[];
}

/** A route deliberately left out of the OpenAPI document. */
export interface ExcludedPage { method: 'GET' | 'POST'; path: string; reason: string }

/** The whole manifest. */
export interface ConsolePages { pages: ConsolePage[]; excluded: ExcludedPage[] }

const SESSIONS = new Set(['none', 'user', 'operator', 'any']);
const ANSWERS = new Set(['html', 'redirect', 'csv']);

function check(entry: ConsolePage, at: string): ConsolePage {
  const ok = (entry.method === 'GET' || entry.method === 'POST') && typeof entry.path === 'string' && entry.path.startsWith('/console')
    && SESSIONS.has(entry.session) && typeof entry.summary === 'string' && Array.isArray(entry.answers) && entry.answers.every((a) => ANSWERS.has(a));
  if (!ok) throw new Error(`console/pages.yaml ${at}: needs method GET or POST, a /console path, session (none, user, operator, any), summary and answers (html, redirect, csv)`);
  return entry;
}

/** Reads console/pages.yaml under the project root. */
export async function loadConsolePages(root: string): Promise<ConsolePages> {
  const raw = parse(await readFile(join(root, 'console', 'pages.yaml'), 'utf8')) as { pages?: ConsolePage[]; excluded?: ExcludedPage[] };
  const pages = (raw.pages ?? []).map((p, i) => check(p, `/pages/${i}`));
  const excluded = (raw.excluded ?? []).map((e, i) => {
    if (typeof e.path !== 'string' || typeof e.reason !== 'string' || e.reason.trim() === '') throw new Error(`console/pages.yaml /excluded/${i}: needs a path and the reason it is excluded`);
    return e;
  });
  return { pages, excluded };
}
