/**
 * console/pages.yaml against the console (issue 13 item 6): every route the console registers is
 * listed (in the OpenAPI document, or excluded with a reason), and every listed page exists; the
 * generated OpenAPI document carries each listed page with its session security.
 */
import Fastify from 'fastify';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConsolePages } from '../../src/console/pages-manifest.js';
import { registerConsole, type ConsoleDeps } from '../../src/console/routes.js';
import { projectRoot } from '../../src/paths.js';

/** The console's routes as `METHOD /path/{param}`, registered on a bare fastify (nothing is called). */
async function registeredRoutes(): Promise<string[]> {
  const app = Fastify();
  const found: string[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) if (method !== 'HEAD') found.push(`${method} ${route.url.replace(/:([A-Za-z_]+)/g, '{$1}')}`);
  });
  registerConsole(app, {} as ConsoleDeps);
  await app.ready();
  await app.close();
  return found.sort();
}

describe('console pages manifest', () => {
  it('lists exactly the routes the console registers', async () => {
    const manifest = await loadConsolePages(projectRoot());
    const listed = [...manifest.pages, ...manifest.excluded].map((p) => `${p.method} ${p.path}`).sort();
    expect(await registeredRoutes()).toEqual(listed);
  });

  it('puts every page in the generated OpenAPI document, with the session cookie where one is needed', async () => {
    const manifest = await loadConsolePages(projectRoot());
    const openapi = JSON.parse(readFileSync(join(projectRoot(), 'src/generated/openapi.json'), 'utf8')) as { paths: Record<string, Record<string, { security: unknown[]; tags: string[] }>>; components: { securitySchemes: Record<string, unknown> } };
    expect(openapi.components.securitySchemes.consoleSession).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'gw_session' });
    for (const page of manifest.pages) {
      const op = openapi.paths[page.path]?.[page.method.toLowerCase()];
      expect(op, `${page.method} ${page.path}`).toBeDefined();
      expect(op!.tags).toEqual(['console']);
      expect(op!.security).toEqual(page.session === 'none' ? [] : [{ consoleSession: [] }]);
    }
    for (const left of manifest.excluded) expect(openapi.paths[left.path]?.[left.method.toLowerCase()]).toBeUndefined();
  });
});
