/**
 * The simulator's document operations (spec 4.9): Azure Document Translation's synchronous
 * `POST /translator/document:translate` (src/sim/azure-document-translation.ts) and the PII redaction
 * contract `POST /pii/v1/documents:redact-pdf` (src/sim/pii-redaction.ts; docs/vendors/pii-redaction.md).
 * Each checks what its wire contract requires, answers a real document (a DOCX whose text runs are
 * prefixed with the target language and x-metered-usage = the source's non-white-space code points; a
 * PDF with as many pages), and honours the faults scoped by its name. The golden fixtures'
 * upstream-response files are these answers: regenerating them gives the same bytes.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { FormData, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { measureDocx } from '../../src/files/verify/documents.js';
import { inspectZip } from '../../src/files/verify/zip.js';
import { projectRoot } from '../../src/paths.js';
import { simMeteredCharacters, simTranslateXml } from '../../src/sim/azure-document-translation.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { docxOf, pdfOf, truncated } from '../helpers/documents.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const fixture = (path: string): Buffer => readFileSync(join(projectRoot(), path));

let sim: Simulator;
beforeAll(async () => { sim = await startSimulator(); });
afterAll(() => sim.close());
beforeEach(async () => { await request(`${sim.url}/__sim/reset`, { method: 'POST' }).then((r) => r.body.dump()); });

interface Answer { status: number; headers: Record<string, string | string[] | undefined>; data: Buffer; json: any }

async function call(path: string, body: FormData | Buffer | string, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await request(`${sim.url}${path}`, { method: 'POST', headers, body });
  const data = Buffer.from(await res.body.arrayBuffer());
  const json = String(res.headers['content-type']).startsWith('application/json') ? JSON.parse(data.toString('utf8')) : null;
  return { status: res.statusCode, headers: res.headers, data, json };
}

function form(parts: Array<[string, Buffer | string, string?, string?]>): FormData {
  const f = new FormData();
  for (const [name, value, type, filename] of parts) {
    if (typeof value === 'string') f.append(name, value);
    else f.append(name, new Blob([new Uint8Array(value)], { type: type ?? DOCX }), filename ?? 'report.docx');
  }
  return f;
}

const translate = (query: string, body: FormData | Buffer, headers: Record<string, string> = {}) => call(`/translator/document:translate?${query}`, body, headers);
const fault = (key: string, f: Record<string, unknown>) => request(`${sim.url}/__sim/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: key, fault: f }) }).then((r) => r.body.dump());

async function mainPart(docx: Buffer): Promise<string> {
  const zip = await inspectZip(docx, {}, { keep: ['word/document.xml'] });
  if (!zip.ok) throw new Error(zip.reason);
  return zip.entries.get('word/document.xml')!.toString('utf8');
}

describe('document:translate', () => {
  it('answers the DOCX with its text runs translated and x-metered-usage = the non-white-space code points of the source', async () => {
    const source = await docxOf(['Hello world', 'Ça va? 😀', '']);
    const a = await translate('api-version=2026-03-01&targetLanguage=fr&sourceLanguage=en', form([['document', source]]), { 'x-ms-client-request-id': 'abc' });
    expect(a.status).toBe(200);
    expect(a.headers['content-type']).toBe('application/octet-stream');
    // "Hello world" 10 + "Ça va? 😀" 6 (Ç a v a ? 😀) + "" 0.
    expect(a.headers['x-metered-usage']).toBe('16');
    expect(a.headers['x-ms-client-request-id']).toBe('abc');
    expect(await measureDocx(a.data)).toMatchObject({ ok: true });
    const runs = [...(await mainPart(a.data)).matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g)].map((m) => m[1]);
    expect(runs).toEqual(['[fr] Hello world', '[fr] Ça va? 😀', '']); // an empty run stays empty
  });

  it('counts and translates runs exactly as documented, entities decoded', () => {
    const xml = '<w:body><w:p><w:r><w:t xml:space="preserve"> A &amp; B </w:t></w:r><w:r><w:t></w:t></w:r><w:r><w:tab/><w:t>&#x1F600;</w:t></w:r></w:p></w:body>';
    expect(simMeteredCharacters(xml)).toBe(4);
    expect(simTranslateXml(xml, 'de')).toBe('<w:body><w:p><w:r><w:t xml:space="preserve">[de]  A &amp; B </w:t></w:r><w:r><w:t></w:t></w:r><w:r><w:tab/><w:t>[de] &#x1F600;</w:t></w:r></w:p></w:body>');
  });

  it('gives the golden fixtures\' answers for the fixture DOCX', async () => {
    const docx = fixture('test/fixtures/files/report.docx');
    for (const [query, dir] of [['targetLanguage=fr&sourceLanguage=en', 'multipart-fr-from-en'], ['targetLanguage=zh-Hans', 'multipart-zh-hans-detected-source']] as const) {
      const a = await translate(`api-version=2026-03-01&${query}`, form([['document', docx]]));
      expect(a.headers['x-metered-usage']).toBe('41');
      expect(a.data.equals(fixture(`test/translate/native-json--azure-document-translation/${dir}/upstream-response.docx`)), dir).toBe(true);
    }
  });

  it('refuses what the operation does not take, in the Azure.Core error shape', async () => {
    const docx = await docxOf(['Hi']);
    const ok = 'api-version=2026-03-01&targetLanguage=fr';
    const cases: Array<[string, string, FormData | Buffer, Record<string, string>, number, string]> = [
      ['api-version', 'api-version=2024-05-01&targetLanguage=fr', form([['document', docx]]), {}, 404, '404'],
      ['no targetLanguage', 'api-version=2026-03-01', form([['document', docx]]), {}, 400, 'InvalidArgument'],
      ['two targetLanguage', `${ok}&targetLanguage=de`, form([['document', docx]]), {}, 400, 'InvalidArgument'],
      ['bad sourceLanguage', `${ok}&sourceLanguage=1`, form([['document', docx]]), {}, 400, 'InvalidArgument'],
      ['unknown query', `${ok}&to=fr`, form([['document', docx]]), {}, 400, 'InvalidArgument'],
      ['empty key', ok, form([['document', docx]]), { 'ocp-apim-subscription-key': ' ' }, 401, '401'],
      ['not multipart', ok, docx, { 'content-type': DOCX }, 400, 'InvalidRequest'],
      ['no document', ok, form([['glossary', docx, 'text/plain', 'g.txt']]), {}, 400, 'InvalidDocument'],
      ['two documents', ok, form([['document', docx], ['document', docx]]), {}, 400, 'InvalidDocument'],
      ['text field', ok, form([['document', docx], ['targetLanguage', 'fr']]), {}, 400, 'InvalidRequest'],
      ['other part', ok, form([['file', docx]]), {}, 400, 'InvalidRequest'],
      ['octet-stream part', ok, form([['document', docx, 'application/octet-stream']]), {}, 400, 'UnsupportedMediaType'],
      ['a PDF typed DOCX', ok, form([['document', await pdfOf(1)]]), {}, 400, 'InvalidDocument'],
      ['a cut DOCX', ok, form([['document', truncated(docx)]]), {}, 400, 'InvalidDocument'],
    ];
    for (const [label, query, body, headers, status, code] of cases) {
      const a = await translate(query, body, headers);
      expect(a.status, label).toBe(status);
      expect(a.json.error.innererror?.code ?? a.json.error.code, label).toBe(code);
      expect(a.headers['x-ms-error-code'], label).toBe(a.json.error.code);
    }
  });

  it('honours the faults scoped to azure-document-translation', async () => {
    const docx = await docxOf(['Hi there']);
    const ok = 'api-version=2026-03-01&targetLanguage=fr';
    await fault('azure-document-translation', { status: 429, times: 1 });
    const busy = await translate(ok, form([['document', docx]]));
    expect([busy.status, busy.headers['retry-after'], busy.json.error.code]).toEqual([429, '7', 'TooManyRequests']);
    await fault('azure-document-translation', { omit_usage: true, times: 1 });
    const uncounted = await translate(ok, form([['document', docx]]));
    expect(uncounted.status).toBe(200);
    expect(uncounted.headers['x-metered-usage']).toBeUndefined();
    await fault('azure-document-translation', { error_after_chunks: 1, times: 1 });
    const broken = await translate(ok, form([['document', docx]]));
    expect(broken.status).toBe(200);
    expect(broken.data.subarray(0, 2).toString()).not.toBe('PK');
    await fault('pii-redaction', { status: 500 });
    expect((await translate(ok, form([['document', docx]]))).status).toBe(200);
  });
});

describe('PII redaction: documents:redact-pdf', () => {
  const redact = (query: string, body: Buffer | string, headers: Record<string, string> = { 'content-type': 'application/pdf' }) => call(`/pii/v1/documents:redact-pdf${query}`, body, headers);

  it('answers a PDF with the same pages, each with a black box, for 1, 2 and 7 pages', async () => {
    for (const pages of [1, 2, 7]) {
      const pdf = await pdfOf(pages, 'Jane Doe');
      const a = await redact('?language=en', pdf);
      expect(a.status).toBe(200);
      expect([a.headers['content-type'], a.headers['x-pages']]).toEqual(['application/pdf', String(pages)]);
      const out = await PDFDocument.load(a.data);
      expect(out.getPageCount()).toBe(pages);
      expect(a.data.equals(pdf)).toBe(false);
    }
    const golden = await redact('?language=de', fixture('test/fixtures/files/scan-2-pages.pdf'));
    expect(golden.data.equals(fixture('test/translate/native-json--pii-redaction/raw-pdf-language/upstream-response.pdf'))).toBe(true);
  });

  it('refuses what the contract does not take with {error: {code, message}}', async () => {
    const pdf = await pdfOf(1);
    const cases: Array<[string, string, Buffer | string, Record<string, string>, number, string]> = [
      ['json', '', '{}', { 'content-type': 'application/json' }, 415, 'UnsupportedMediaType'],
      ['unknown query', '?lang=en', pdf, { 'content-type': 'application/pdf' }, 400, 'InvalidRequest'],
      ['bad language', '?language=e', pdf, { 'content-type': 'application/pdf' }, 400, 'InvalidRequest'],
      ['auth scheme', '', pdf, { 'content-type': 'application/pdf', authorization: 'Basic abc' }, 401, 'Unauthorized'],
      ['not a PDF', '', await docxOf(['x']), { 'content-type': 'application/pdf' }, 400, 'InvalidDocument'],
      ['cut PDF', '', truncated(pdf), { 'content-type': 'application/pdf' }, 400, 'InvalidDocument'],
    ];
    for (const [label, query, body, headers, status, code] of cases) {
      const a = await redact(query, body, headers);
      expect([a.status, a.json.error.code], label).toEqual([status, code]);
    }
    expect((await redact('', pdf, { 'content-type': 'application/pdf', authorization: 'Bearer xyz-test-not-real' })).status).toBe(200);
  });

  it('honours the faults scoped to pii-redaction', async () => {
    const pdf = await pdfOf(2);
    await fault('pii-redaction', { status: 503, times: 1 });
    const down = await redact('', pdf);
    expect([down.status, down.json.error.code]).toEqual([503, 'InternalServerError']);
    await fault('pii-redaction', { error_after_chunks: 1, times: 1 });
    const broken = await redact('', pdf);
    expect(broken.status).toBe(200);
    expect(broken.data.includes('%PDF-')).toBe(false);
    await fault('pii-redaction', { truncate_after_chunks: 1, times: 1 });
    const cut = await request(`${sim.url}/pii/v1/documents:redact-pdf`, { method: 'POST', headers: { 'content-type': 'application/pdf' }, body: pdf });
    await expect(cut.body.arrayBuffer()).rejects.toThrow();
  });
});
