/**
 * The service routes against the OpenAPI document (issue 33 item 4): every route the gateway
 * registers outside routes/, the admin API and the console is listed in api/service.yaml with its
 * method, and the real answers of health, readiness, metrics, the document itself and the signed
 * file URLs fit the document's schemas for their status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadApiManifests } from '../../codegen/api-manifest.js';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { answerChecker, generatedDocument } from '../helpers/openapi-contract.js';

/** Fastify's route tree (printRoutes without common prefixes) as `path -> methods`, params as `{name}`. */
function routeList(tree: string): Map<string, string[]> {
  const routes = new Map<string, string[]>();
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:│ {3}| {4})*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    if (m[3]) routes.set(stack.join('').replace(/:([A-Za-z_]+)/g, '{$1}'), m[3].split(', ').filter((x) => x !== 'HEAD'));
  }
  return routes;
}

describe.runIf(storeKind === 'pglite')('service routes and the OpenAPI document', () => {
  let t: TestGateway;
  const checker = answerChecker(generatedDocument());

  beforeAll(async () => { t = await startTestGateway(); });
  afterAll(async () => { await t?.dispose(); });

  it('api/service.yaml lists every route registered outside routes/, the admin API and the console', async () => {
    const service = (await loadApiManifests(projectRoot())).find((m) => m.file === 'api/service.yaml')!.manifest;
    const registered = routeList(t.gw.app.printRoutes({ commonPrefix: false }));
    expect(registered.size).toBeGreaterThan(10);
    // The catch-all serves routes/*.yaml; the catalogue is documented by codegen itself (codegen/openapi.ts).
    const others = [...registered.keys()].filter((p) => p !== '*' && p !== '/api/public/catalog' && !p.startsWith('/admin') && !p.startsWith('/console')).sort();
    expect(others).toEqual([...new Set(service.operations.map((op) => op.path))].sort());
    for (const op of service.operations) expect(registered.get(op.path), `${op.method} ${op.path}`).toContain(op.method);
  });

  it('answers health, readiness, metrics and the document as documented', async () => {
    const health = await fetch(`${t.url}/healthz`);
    checker.check('GET', '/healthz', health.status, await health.json());
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(200);
    checker.check('GET', '/readyz', ready.status, await ready.json());
    const metrics = await fetch(`${t.url}/metrics`);
    expect([metrics.status, metrics.headers.get('content-type')?.split(';')[0]]).toEqual([200, 'text/plain']);
    checker.check('GET', '/metrics', 200, await metrics.text(), 'text/plain');
    const doc = await fetch(`${t.url}/openapi.json`);
    checker.check('GET', '/openapi.json', doc.status, await doc.json());
  });

  it('answers the signed upload and read URLs as documented', async () => {
    const account = await t.account('0');
    const bytes = Buffer.from('%PDF-1.4 a temporary file of the signed URL test');
    const authorized = await fetch(`${t.url}/v1/gateway/files/upload-authorizations`, {
      method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ purpose: 'DOCUMENT_INPUT', content_type: 'application/pdf', byte_size: bytes.length }),
    });
    const a = (await authorized.json()) as { file_id: string; upload_url: string; method: string; headers: Record<string, string> };
    expect(authorized.status, JSON.stringify(a)).toBe(200);
    const uploadPath = '/v1/gateway/files/uploads/{id}';
    const wrongMethod = await fetch(a.upload_url);
    checker.check('PUT', uploadPath, wrongMethod.status, await wrongMethod.json());
    const put = await fetch(a.upload_url, { method: a.method, headers: a.headers, body: new Uint8Array(bytes) });
    checker.check('PUT', uploadPath, put.status, await put.json());
    expect(put.status).toBe(200);
    const again = await fetch(a.upload_url, { method: a.method, headers: a.headers, body: new Uint8Array(bytes) });
    expect(again.status).toBe(409);
    checker.check('PUT', uploadPath, again.status, await again.json());

    const finalized = await fetch(`${t.url}/v1/gateway/files/${a.file_id}/finalize`, { method: 'POST', headers: { authorization: `Bearer ${account.key}` } });
    expect(finalized.status).toBe(200);
    const temp = t.gw.runtime.files!.temp;
    const readUrl = await temp.readUrl(await temp.resolve(account.id, a.file_id, ['DOCUMENT_INPUT']), t.url);
    const read = await fetch(readUrl, { headers: { range: 'bytes=0-3' } });
    expect([read.status, Buffer.from(await read.arrayBuffer()).toString()]).toEqual([206, '%PDF']);
    expect(checker.check('GET', '/v1/gateway/files/blobs/{id}', 206, '%PDF', '*/*')).toBe('signed-read');
    const forged = await fetch(readUrl.replace(/signature=[^&]+/, 'signature=AAAA'));
    checker.check('GET', '/v1/gateway/files/blobs/{id}', forged.status, await forged.json());
    expect(forged.status).toBe(403);
  });
});
