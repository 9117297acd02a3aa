/**
 * Contract for OCR and document analysis (issue 12; spec 4.12): Prism playing Azure Document
 * Intelligence from its published spec (../shared/specs/azure/document-intelligence, the
 * `.prism-oas3.json` copy whose paths carry the /documentintelligence prefix) validates, with no
 * violation, the analyze request the gateway sends for every input method (JSON AnalyzeDocumentRequest
 * with `base64Source`, never `urlSource`; the api-version and the client's `pages`, `locale` and
 * `outputContentFormat` as query parameters; the Ocp-Apim-Subscription-Key header), and the poll of the
 * analyze operation.
 *
 * The poll: Prism's 202 names the operation at a placeholder host (an example.com URL), which the
 * gateway refuses to follow (a vendor answer never sends it, with the key, to an undeclared host: a
 * 502, nothing charged). So the poll is checked separately, sent by the gateway's own UpstreamClient
 * (`poll()`, what src/pipeline/forward/poll.ts calls for each poll) at the Operation-Location a real
 * resource would answer, on Prism's origin: the GET of `analyzeResults/{resultId}` with the
 * api-version and the key must pass Prism's validation too.
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { pdfOf } from '../helpers/documents.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { gatewayRequestAsLogged, loggedRequestsSince, logMark, startPrismMock, stopChild, type PrismProcess } from '../helpers/prism.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { startServer, type TestServer } from '../upstream/fetch/servers.js';
import { rm } from 'node:fs/promises';

const SPEC = resolve(projectRoot(), '../shared/specs/azure/document-intelligence/DocumentIntelligence-2025-09-01.prism-oas3.json');
const KEY = 'di-test-not-real';

describe.runIf(storeKind === 'pglite')('Prism vendor contract: the Azure Document Intelligence requests validate against the vendor\'s spec', () => {
  let prism: PrismProcess;
  let t: TestGateway;
  let copy: ConfigCopy;
  let files: TestServer;
  let key: string;
  let pdf: Buffer;

  beforeAll(async () => {
    pdf = await pdfOf(2);
    prism = await startPrismMock(SPEC);
    files = await startServer({ '/report.pdf': (_req, res) => res.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf) });
    copy = await copyConfig();
    await copy.editYaml('gateway.config.yaml', (doc) => { doc.url_inputs = { allow_hosts: [`127.0.0.1:${files.port}`] }; });
    t = await startTestGateway({ configFile: copy.configFile, env: { AZURE_DOCUMENT_INTELLIGENCE_KEY: KEY, AZURE_DOCUMENT_INTELLIGENCE_ENDPOINT: prism.url } });
    key = (await t.account('5')).key;
  }, 180_000);

  afterAll(async () => {
    await t?.dispose();
    await files?.close();
    await stopChild(prism?.child);
    if (copy) await rm(copy.dir, { recursive: true, force: true });
  }, 60_000);

  const analyzeOf = (model: string) => `/documentintelligence/documentModels/${model}:analyze`;

  it('OCR: POST prebuilt-read:analyze with base64Source from base64, a data URL and a fetched URL', async () => {
    const base64 = pdf.toString('base64');
    for (const body of [{ image: base64 }, { image: `data:application/pdf;base64,${base64}`, pages: '1-2', locale: 'en-US' }, { url: `http://127.0.0.1:${files.port}/report.pdf` }]) {
      const { logged, status } = await gatewayRequestAsLogged(t.url, key, prism, '/v1/ocr', body, analyzeOf('prebuilt-read'));
      expect(logged.headers['ocp-apim-subscription-key']).toBe(KEY);
      expect(logged.headers['content-type']).toMatch(/^application\/json/);
      expect(logged.body).toEqual({ base64Source: base64 });
      // The mock's operation is at example.com: never polled (502, nothing charged).
      expect(status).toBe(502);
    }
  });

  it('document analysis: POST prebuilt-layout:analyze with the query parameters the spec defines', async () => {
    const body = { document: pdf.toString('base64'), pages: '2', locale: 'fr', content_format: 'markdown' };
    const { logged } = await gatewayRequestAsLogged(t.url, key, prism, '/v1/documents/analyze', body, analyzeOf('prebuilt-layout'));
    expect(logged.body).toEqual({ base64Source: pdf.toString('base64') });
    expect(logged.headers['ocp-apim-subscription-key']).toBe(KEY);
    // Prism's log names the path only; the query is checked by its validation, which does refuse a bad
    // one (here without the required api-version, and with a page list the spec's pattern refuses).
    const bad = await fetch(`${prism.url}${analyzeOf('prebuilt-layout')}?pages=first`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'ocp-apim-subscription-key': KEY }, body: JSON.stringify({ base64Source: 'AAAA' }),
    });
    expect(bad.status).toBe(422);
    const badBody = await fetch(`${prism.url}${analyzeOf('prebuilt-layout')}?api-version=2025-09-01`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'ocp-apim-subscription-key': KEY }, body: JSON.stringify({ base64Source: 7 }),
    });
    expect(badBody.status).toBe(422);
  });

  it('the poll: GET analyzeResults/{resultId} as the gateway sends it validates', async () => {
    const provider = t.gw.generation().gateway.providers.get('azure_document_intelligence')!;
    for (const model of ['prebuilt-read', 'prebuilt-layout']) {
      const mark = logMark(prism);
      const location = `${prism.url}/documentintelligence/documentModels/${model}/analyzeResults/${randomUUID()}?api-version=2025-09-01`;
      const answer = await t.gw.runtime.upstream.poll(provider, location, new AbortController().signal);
      const text = await answer.body.text();
      const [logged, ...rest] = await loggedRequestsSince(prism, mark, 1);
      const detail = `${answer.status}: ${text.slice(0, 300)}\n${logged?.lines.join('\n')}`;
      expect(rest, detail).toEqual([]);
      expect(`${logged!.method} ${logged!.path}`, detail).toBe(`GET /documentintelligence/documentModels/${model}/analyzeResults/${location.split('/analyzeResults/')[1]!.split('?')[0]}`);
      expect([logged!.violations, logged!.passed], detail).toEqual([[], true]);
      expect(logged!.headers['ocp-apim-subscription-key']).toBe(KEY);
      expect(answer.status).toBe(200);
    }
    // The validation has teeth: a result id that is not the spec's uuid is refused.
    const wrong = await t.gw.runtime.upstream.poll(provider, `${prism.url}/documentintelligence/documentModels/prebuilt-read/analyzeResults/not-a-uuid?api-version=2025-09-01`, new AbortController().signal);
    await wrong.body.dump();
    expect(wrong.status).toBe(422);
  });
});
