/**
 * The account console (issue 13), served by the gateway at /console in one encapsulated fastify
 * plugin: its own form parser (application/x-www-form-urlencoded, nowhere else), its own error pages,
 * its assets (a stylesheet, a small script, and Chart.js from the project's own node_modules: nothing
 * is fetched from the internet), and the pages: sign-up and sign-in, keys, usage and balance, the
 * catalogue, and the operator view.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { projectRoot } from '../paths.js';
import { ConsoleRefusal, parseForm, sendPage, type ConsoleDeps } from './context.js';
import { esc, page } from './html.js';
import { registerAuthPages } from './pages/auth.js';
import { registerKeyPages } from './pages/keys.js';
import { registerKeySettingsPages } from './pages/key-settings.js';
import { registerCataloguePage } from './pages/catalogue.js';
import { registerUsagePages } from './pages/usage.js';
import { registerOperatorPages } from './pages/operator.js';

export type { ConsoleDeps } from './context.js';

/** The console's static files: name -> where it is under the project root, and its type. */
const ASSETS: Readonly<Record<string, { path: string; type: string }>> = {
  'console.css': { path: 'src/console/assets/console.css', type: 'text/css; charset=utf-8' },
  'console.js': { path: 'src/console/assets/console.js', type: 'text/javascript; charset=utf-8' },
  'chart.umd.min.js': { path: 'node_modules/chart.js/dist/chart.umd.min.js', type: 'text/javascript; charset=utf-8' },
  'usage-chart.js': { path: 'src/console/assets/usage-chart.js', type: 'text/javascript; charset=utf-8' },
};

/** Content-Security-Policy of every console page: scripts and styles from the gateway only. */
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'";

/** Registers the console. */
export function registerConsole(app: FastifyInstance, deps: ConsoleDeps): void {
  void app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_req, body, done) => {
      done(null, parseForm(body as string));
    });
    scope.addHook('onSend', async (_req, reply, payload) => {
      reply.header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').header('referrer-policy', 'same-origin').header('x-frame-options', 'DENY');
      return payload;
    });
    scope.setErrorHandler(async (error, _req, reply) => {
      const refusal = error instanceof ConsoleRefusal ? error : null;
      const status = refusal?.status ?? (typeof (error as { statusCode?: number }).statusCode === 'number' && (error as { statusCode: number }).statusCode < 500 ? (error as { statusCode: number }).statusCode : 500);
      if (!refusal && status >= 500) deps.log('console page failed', { error }, 'error');
      const text = refusal?.message ?? (status >= 500 ? 'Something went wrong on our side. Try again in a moment.' : 'The request could not be understood.');
      for (const [name, value] of Object.entries(refusal?.headers ?? {})) void reply.header(name, value);
      await sendPage(reply, page(status === 404 ? 'Not found' : 'Something is not right', `<section><p>${esc(text)}</p><p><a href="/console">Back to the console</a></p></section>`, { flash: null }), status);
    });
    scope.get('/console/assets/:name', async (req, reply) => {
      const asset = ASSETS[(req.params as { name: string }).name];
      if (!asset) throw new ConsoleRefusal(404, 'No such file.');
      const body = await readFile(join(projectRoot(), asset.path));
      return reply.header('content-type', asset.type).header('cache-control', 'public, max-age=3600').send(body);
    });
    registerAuthPages(scope, deps);
    registerKeyPages(scope, deps);
    registerKeySettingsPages(scope, deps);
    registerCataloguePage(scope, deps);
    registerUsagePages(scope, deps);
    registerOperatorPages(scope, deps);
  });
}
