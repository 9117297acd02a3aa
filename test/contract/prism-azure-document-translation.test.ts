/**
 * Contract (issue 12 item 1; spec 4.9): the gateway's outgoing document translation request against
 * Azure Document Translation's published spec. A Prism mock (`prism mock`, not proxy: proxy mode
 * corrupts binary bodies) plays the vendor from
 * ../shared/specs/azure/document-translation/DocumentTranslation-2026-03-01.openapi.prism-oas3.json
 * (whose paths carry the service prefix `/translator`); the gateway runs with a real-looking key and
 * the mock as AZURE_DOCUMENT_TRANSLATION_ENDPOINT, so the multipart request the translator builds is
 * what Prism validates: the path, the api-version and targetLanguage (both required query parameters),
 * sourceLanguage, the Ocp-Apim-Subscription-Key header and the required `document` part.
 *
 * What Prism cannot check faithfully: the spec types `document` as `string`/`binary`, which Prism
 * checks for presence only (it does not look inside a file, and logs no binary body, nor the query
 * string's values). That the part carries the client's DOCX typed as a DOCX, and the query's values,
 * are asserted by the golden cases (test/translate/documents.test.ts) and by the simulator, which
 * refuses any other part type (test/sim/document-translation-pii.test.ts). Negative controls, sent
 * straight to the mock, show the validation is live: no targetLanguage, no document part.
 * The mock's 200 is a placeholder (no DOCX, no x-metered-usage), which the gateway refuses as a 502
 * with nothing charged: billing is checked in test/e2e/documents-translate.test.ts.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectRoot } from '../../src/paths.js';
import { storeKind } from '../helpers/db.js';
import { docxOf } from '../helpers/documents.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectUntouched } from '../helpers/native.js';
import { logMark, parsePrismLog, startPrismMock, stopChild, stripAnsi, type PrismLoggedRequest, type PrismProcess } from '../helpers/prism.js';

const SPEC = resolve(projectRoot(), '../shared/specs/azure/document-translation/DocumentTranslation-2026-03-01.openapi.prism-oas3.json');
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

/**
 * The requests the mock logged after `mark`, once `count` are complete. A multipart body with binary
 * bytes makes Prism's log line for the request lose its "Request received" text (the line ends after
 * the level), which parsePrismLog looks for: it is put back first. Prism logs the path without the
 * query string.
 */
async function requestsSince(prism: PrismProcess, mark: number, count = 1): Promise<PrismLoggedRequest[]> {
  for (let tries = 0; ; tries++) {
    const text = stripAnsi(prism.log().slice(mark)).replace(/^(.*\[HTTP SERVER\] \w+ \S+ .*info)\s*$/gm, '$1 Request received');
    const requests = parsePrismLog(text);
    if (requests.filter((r) => r.complete).length >= count || tries > 200) return requests;
    await new Promise((ok) => setTimeout(ok, 25));
  }
}

describe.runIf(storeKind === 'pglite')('Prism vendor contract: the document translation request validates against Azure Document Translation\'s spec', () => {
  let vendor: PrismProcess;
  let t: TestGateway;
  let report: Buffer;

  beforeAll(async () => {
    vendor = await startPrismMock(SPEC);
    t = await startTestGateway({ env: { AZURE_DOCUMENT_TRANSLATION_KEY: 'doctr-test-not-real', AZURE_DOCUMENT_TRANSLATION_ENDPOINT: vendor.url } });
    report = await docxOf(['Quarterly report', 'Revenue grew.']);
  }, 180_000);
  afterAll(async () => {
    await t?.dispose();
    await stopChild(vendor?.child);
  }, 60_000);

  const form = (parts: Array<[string, Buffer]>): FormData => {
    const f = new FormData();
    for (const [name, data] of parts) f.append(name, new Blob([new Uint8Array(data)], { type: DOCX }), 'report.docx');
    return f;
  };

  /** Sends `query` and `body` to `base + path` and returns the answer's status and text with the one request the mock logged. */
  async function logged(base: string, path: string, body: FormData, headers: Record<string, string>) {
    const mark = logMark(vendor);
    const res = await fetch(`${base}${path}`, { method: 'POST', headers, body });
    const text = await res.text();
    const requests = await requestsSince(vendor, mark);
    const detail = `${path} -> ${res.status} ${text.slice(0, 300)}\n${requests.flatMap((l) => l.lines).join('\n').slice(0, 6000)}`;
    expect(requests, detail).toHaveLength(1);
    return { status: res.status, text, logged: requests[0]!, detail };
  }

  // The query's values are the translator's (test/translate/documents.test.ts golden cases); Prism checks
  // the required api-version and targetLanguage are there and well typed, which it does not log.
  for (const [name, query] of [['to and from', '?to=fr&from=en'], ['to only (the source detected)', '?to=zh-Hans']] as const) {
    it(`${name}: POST /translator/document:translate passes with the document part, the key and the query`, async () => {
      const account = await t.account('5');
      const { status, text, logged: request, detail } = await logged(t.url, `/v1/documents/translate${query}`, form([['document', report]]), { authorization: `Bearer ${account.key}` });
      expect(`${request.method} ${request.path}`, detail).toBe('POST /translator/document:translate');
      expect(request.violations, detail).toEqual([]);
      expect(request.passed, detail).toBe(true);
      expect(request.terminated, detail).toBeNull();
      expect(request.headers['ocp-apim-subscription-key'], detail).toBe('doctr-test-not-real');
      expect(request.headers['content-type'], detail).toMatch(/^multipart\/form-data; boundary=/);
      // The mock's placeholder answer is not a document with its billed count: a 502, nothing charged.
      expect(status, detail).toBe(502);
      expect(JSON.parse(text).error.code).toBe('upstream_error');
      await expectUntouched(t, account, 5_000_000_000n);
    });
  }

  it('negative controls: without targetLanguage, or without the document part, the mock reports a violation', async () => {
    const headers = { 'ocp-apim-subscription-key': 'doctr-test-not-real' };
    const noLanguage = await logged(vendor.url, '/translator/document:translate?api-version=2026-03-01', form([['document', report]]), headers);
    expect(noLanguage.status, noLanguage.detail).toBe(422);
    expect(noLanguage.logged.violations.join('\n'), noLanguage.detail).toMatch(/targetlanguage/i); // Prism lower-cases query names
    const noDocument = await logged(vendor.url, '/translator/document:translate?api-version=2026-03-01&targetLanguage=fr', form([['file', report]]), headers);
    expect(noDocument.status, noDocument.detail).toBe(422);
    expect(noDocument.logged.violations.join('\n'), noDocument.detail).toMatch(/document/);
  });
});
