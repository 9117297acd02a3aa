/**
 * The console's pages in the OpenAPI document (issue 13 item 6), from console/pages.yaml: each an
 * operation under the `console` tag with its form fields (application/x-www-form-urlencoded, `csrf`
 * on every POST), its query parameters, its answers (HTML, a 303 redirect, CSV) and the session cookie
 * as its security (none for the anonymous pages).
 */
import type { ConsolePage, ConsolePages } from '../src/console/pages-manifest.js';

type Json = Record<string, unknown>;

const ANSWERS: Readonly<Record<string, [string, Json]>> = {
  html: ['200', { description: 'An HTML page.', content: { 'text/html': { schema: { type: 'string' } } } }],
  csv: ['200', { description: 'A CSV download.', content: { 'text/csv': { schema: { type: 'string' } } } }],
  redirect: ['303', { description: 'Redirect to the next page (Location).' }],
};

function pathParameters(path: string): Json[] {
  return [...path.matchAll(/\{([^}]+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
}

function operation(page: ConsolePage): Json {
  const fields = page.method === 'POST' ? ['csrf', ...(page.form ?? [])] : [];
  const responses: Json = Object.fromEntries(page.answers.map((a) => ANSWERS[a]!));
  responses['403'] = { description: 'A form without its CSRF token, or a page this session may not open.', content: { 'text/html': { schema: { type: 'string' } } } };
  return {
    operationId: `console${page.method.toLowerCase()}${page.path.replace(/^\/console/, '').replace(/[^A-Za-z0-9]+(.)?/g, (_m, c?: string) => (c ? c.toUpperCase() : '')) || 'Home'}`,
    tags: ['console'],
    summary: page.summary,
    security: page.session === 'none' ? [] : [{ consoleSession: [] }],
    parameters: [...pathParameters(page.path), ...(page.query ?? []).map((name) => ({ name, in: 'query', required: false, schema: { type: 'string' } }))],
    ...(fields.length ? { requestBody: { required: true, content: { 'application/x-www-form-urlencoded': { schema: { type: 'object', required: ['csrf'], properties: Object.fromEntries(fields.map((f) => [f, { type: 'string' }])) } } } } } : {}),
    responses,
  };
}

/** The console's path items, keyed by path. */
export function consolePaths(manifest: ConsolePages): Record<string, Json> {
  const paths: Record<string, Json> = {};
  for (const page of manifest.pages) (paths[page.path] ??= {})[page.method.toLowerCase()] = operation(page);
  return paths;
}

/** The console session's security scheme. */
export const CONSOLE_SESSION_SCHEME: Json = { type: 'apiKey', in: 'cookie', name: 'gw_session', description: 'The console session cookie (never an API key; an API key never opens the console).' };
