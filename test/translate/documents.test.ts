/**
 * The document translators (spec 4.9): native-json--azure-document-translation (Azure Document
 * Translation's synchronous document:translate, multipart) and native-json--pii-redaction (the PII
 * redaction contract of docs/vendors/pii-redaction.md, a raw PDF). Their golden cases
 * (test/translate/<pair>/<case>/, run by golden.test.ts) pin the requests and the downloads; here is
 * what the cases cannot show: a missing or malformed billed count, bytes that are not the promised
 * document, the vendors' errors, and the download names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileGateway } from '../../src/config/compile.js';
import { loadGateway } from '../../src/config/load.js';
import type { CompiledGateway } from '../../src/config/types.js';
import { GatewayError } from '../../src/errors.js';
import type { UploadedFile } from '../../src/bodies/multipart.js';
import { projectRoot } from '../../src/paths.js';
import { downloadName, fileStem } from '../../src/translate/documents.js';
import { meteredCharacters } from '../../src/translate/native-json--azure-document-translation/index.js';
import { createTranslator } from '../../src/translate/registry.js';

const here = join(projectRoot(), 'test/translate');
const PAIRS = ['native-json--azure-document-translation', 'native-json--pii-redaction'] as const;


let gateway: CompiledGateway;
beforeAll(async () => {
  gateway = await compileGateway(await loadGateway(join(projectRoot(), 'gateway.config.yaml')), { env: {}, simulatorUrl: 'http://127.0.0.1:1' });
});

/** A translator of `pair` that has sent its request (so it knows the client's file name). */
function sent(pair: (typeof PAIRS)[number], client: Record<string, unknown>, files: UploadedFile[]) {
  const [from, to] = pair.split('--') as [string, string];
  const translator = createTranslator(from, to, client, String(client.model));
  translator.request(client, gateway.offerings.get(String(client.model))!, files);
  return translator;
}

function expectGatewayError(run: () => unknown, code: string, status: number, message?: string | RegExp): GatewayError {
  let caught: unknown;
  try { run(); } catch (error) { caught = error; }
  expect(caught).toBeInstanceOf(GatewayError);
  const error = caught as GatewayError;
  expect([error.code, error.status]).toEqual([code, status]);
  if (message !== undefined) expect(error.message).toMatch(message);
  return error;
}

describe('document translation answers', () => {
  const docx = readFileSync(join(projectRoot(), 'test/fixtures/files/report.docx'));
  const translated = readFileSync(join(here, 'native-json--azure-document-translation/multipart-fr-from-en/upstream-response.docx'));
  const translator = () => sent('native-json--azure-document-translation', { model: 'document-translation', to: 'fr' }, [{ field: 'document', filename: 'report.docx', contentType: 'x', data: docx }]);

  it('reads x-metered-usage as a whole number only: missing, empty, fractional, negative or text is a 502', () => {
    expect(meteredCharacters({ 'x-metered-usage': '0' })).toBe(0);
    expect(meteredCharacters({ 'x-metered-usage': ' 1234 ' })).toBe(1234);
    for (const value of [undefined, '', '12.5', '-1', 'abc', '1e3', '12 34', '9'.repeat(16)]) {
      expectGatewayError(() => translator().file!(translated, value === undefined ? {} : { 'x-metered-usage': value }, 'document-translation'), 'upstream_error', 502, /x-metered-usage/);
    }
  });

  it('plans the download from the headers alone: the charged characters, or a 502 before any byte when they are missing', () => {
    const plan = translator().filePlan!({ 'x-metered-usage': '41' }, 'document-translation');
    expect([plan.filename, plan.quantities, plan.headBytes, plan.tailBytes]).toEqual(['report.fr.docx', { characters: 41 }, 4, 0]);
    expect(() => plan.checkHead(translated.subarray(0, 4))).not.toThrow();
    expectGatewayError(() => plan.checkHead(Buffer.from('%PDF')), 'upstream_error', 502, 'The upstream provider sent a file that is not a DOCX.');
    expectGatewayError(() => translator().filePlan!({}, 'document-translation'), 'upstream_error', 502, /x-metered-usage/);
  });

  it('refuses a 200 whose bytes are not a zip package (502, nothing billed)', () => {
    expectGatewayError(() => translator().file!(Buffer.from('%PDF-1.7 not a docx'), { 'x-metered-usage': '41' }, 'document-translation'), 'upstream_error', 502, 'The upstream provider sent a file that is not a DOCX.');
    expectGatewayError(() => translator().response({}, 'document-translation'), 'upstream_error', 502, 'The upstream provider sent JSON where a document was expected.');
  });

  it('maps Azure.Core errors: the inner message of a request error, nothing of a credential failure, 429 with retry-after', () => {
    const t = translator();
    const bad = t.error(400, { error: { code: 'InvalidRequest', message: 'Bad request.', innererror: { code: 'UnsupportedLanguage', message: "The target language 'xx' is not supported." } } }, {});
    expect([bad.code, bad.status, bad.message]).toEqual(['invalid_request', 400, "The target language 'xx' is not supported."]);
    const plain = t.error(415, { error: { code: 'UnsupportedMediaType', message: 'The document format is not supported.' } }, {});
    expect([plain.code, plain.status, plain.message]).toEqual(['invalid_request', 400, 'The document format is not supported.']);
    const key = t.error(401, { error: { code: '401', message: 'Access denied due to invalid subscription key xyz-test-not-real.' } }, {});
    expect([key.code, key.status]).toEqual(['upstream_error', 502]);
    expect(key.message).not.toContain('xyz-test-not-real');
    const busy = t.error(429, { error: { code: 'TooManyRequests', message: 'Slow down.' } }, { 'retry-after': '7' });
    expect([busy.code, busy.status, busy.extra.headers]).toEqual(['upstream_rate_limited', 429, { 'retry-after': '7' }]);
    expect(t.error(503, null, {}).code).toBe('upstream_error');
  });
});

describe('PII redaction answers', () => {
  const pdf = readFileSync(join(projectRoot(), 'test/fixtures/files/scan-2-pages.pdf'));
  const translator = () => sent('native-json--pii-redaction', { model: 'pii-redaction' }, [{ field: 'document', filename: 'scan.pdf', contentType: 'application/pdf', data: pdf }]);

  it('refuses a 200 that is not a whole PDF: not one, or cut before its end-of-file marker', () => {
    expectGatewayError(() => translator().file!(Buffer.from('{"error": {"code": "simulated'), {}, 'pii-redaction'), 'upstream_error', 502, 'The upstream provider sent a file that is not a PDF.');
    expectGatewayError(() => translator().file!(pdf.subarray(0, pdf.length - 100), {}, 'pii-redaction'), 'upstream_error', 502, 'The upstream provider sent a file that is not a PDF.');
    expect(translator().file!(pdf, {}, 'pii-redaction').filename).toBe('scan.redacted.pdf');
  });

  it('splits the same checks for streaming: the first kilobyte before any byte is sent, the last one at the end', () => {
    const plan = translator().filePlan!({}, 'pii-redaction');
    expect([plan.contentType, plan.filename, plan.headBytes, plan.tailBytes]).toEqual(['application/pdf', 'scan.redacted.pdf', 1024, 1024]);
    expect(() => plan.checkHead(pdf.subarray(0, 1024))).not.toThrow();
    expectGatewayError(() => plan.checkHead(Buffer.from('{"error": {"code": "simulated')), 'upstream_error', 502, 'The upstream provider sent a file that is not a PDF.');
    expect(() => plan.checkTail!(pdf.subarray(pdf.length - 1024))).not.toThrow();
    const cut = pdf.subarray(0, pdf.length - 100);
    expectGatewayError(() => plan.checkTail!(cut.subarray(cut.length - 1024)), 'upstream_error', 502, 'The upstream provider sent a file that is not a PDF.');
  });

  it('maps the contract\'s errors: a request error\'s message, an upstream failure as 502', () => {
    const t = translator();
    const bad = t.error(400, { error: { code: 'InvalidDocument', message: 'The body is not a PDF the service can read.' } }, {});
    expect([bad.code, bad.status, bad.message]).toEqual(['invalid_request', 400, 'The body is not a PDF the service can read.']);
    const big = t.error(413, { error: { code: 'PayloadTooLarge', message: 'Too large.' } }, {});
    expect([big.code, big.status]).toEqual(['invalid_request', 413]);
    expect(t.error(500, { error: { code: 'InternalServerError', message: 'boom' } }, {}).status).toBe(502);
  });

  it('has no request to send without its document part (a gateway bug, never the client\'s)', () => {
    const t = createTranslator('native-json', 'pii-redaction', { model: 'pii-redaction' }, 'pii-redaction');
    expectGatewayError(() => t.request({ model: 'pii-redaction' }, gateway.offerings.get('pii-redaction')!, []), 'internal_error', 500);
  });
});

describe('download names', () => {
  it('keeps the client\'s stem, drops its path and extension, replaces what file systems refuse', () => {
    expect(downloadName('report.docx', 'fr', 'docx')).toBe('report.fr.docx');
    expect(downloadName('REPORT.DOCX', 'pt-PT', 'docx')).toBe('REPORT.pt-PT.docx');
    expect(downloadName('notes', 'de', 'docx')).toBe('notes.de.docx');
    expect(downloadName('/home/ana/Q3/report.v2.docx', 'fr', 'docx')).toBe('report.v2.fr.docx');
    expect(downloadName('C:\\Users\\ana\\scan.pdf', 'redacted', 'pdf')).toBe('scan.redacted.pdf');
    expect(downloadName('a:b*c?d"e<f>g|h.pdf', 'redacted', 'pdf')).toBe('a_b_c_d_e_f_g_h.redacted.pdf');
    expect(downloadName('tab\there\u0085.docx', 'fr', 'docx')).toBe('tab_here_.fr.docx');
    expect(downloadName('Ünïcödé 😀.docx', 'ja', 'docx')).toBe('Ünïcödé 😀.ja.docx');
  });

  it('falls back to `document` when nothing usable is left, and keeps at most 100 code points', () => {
    for (const name of [undefined, '', '.docx', '...', ' .docx', '???.docx', '../', 'C:\\']) expect(fileStem(name, 'docx'), String(name)).toBe('document');
    expect(fileStem('..hidden..docx', 'docx')).toBe('hidden');
    expect([...fileStem(`${'é'.repeat(150)}.docx`, 'docx')]).toHaveLength(100);
  });
});
