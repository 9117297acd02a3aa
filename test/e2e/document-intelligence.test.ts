/**
 * POST /v1/ocr and POST /v1/documents/analyze end to end (issue 12; spec 1, 2, 4.12, 7): real HTTP
 * through the gateway to the simulator playing Azure Document Intelligence (prebuilt-read,
 * prebuilt-layout), whose analyze operation is polled inside the request. Real files: PDFs of 1, 2
 * and 7 pages (pdf-lib), a PNG, a JPEG, a DOCX. Billing is per page as the upstream reports it,
 * exact to the nano-dollar, in X-Gateway-Pages and X-Gateway-Cost-USD. Every input method on both
 * routes (base64, data URL, a URL served from loopback through `url_inputs.allow_hosts`, a finalized
 * file of purpose OCR_INPUT or DOCUMENT_INPUT); refused with nothing reserved: none or two inputs, a
 * truncated PDF, a type the route does not take, refused URLs (loopback not allowed, a redirect to a
 * refused host, a name resolving to a private address), another account's file, the wrong purpose, a
 * pending or an expired file. The poll: several polls, a failed job, a job past the deadline, a
 * succeeded one without a result; each charges nothing and releases its hold.
 *
 * The providers' poll interval is shortened to 20 ms and the deadline to 1.5 s in this test's
 * configuration copy; a job's outcome is scripted by its PDF's keywords (test/helpers/marked-pdf.ts).
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { projectRoot } from '../../src/paths.js';
import { copyConfig, type ConfigCopy } from '../helpers/config.js';
import { describeStore, storeKind } from '../helpers/db.js';
import { docxOf, pdfOf, truncated } from '../helpers/documents.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { png } from '../helpers/images.js';
import { jpeg } from '../helpers/jpeg.js';
import { markedPdf } from '../helpers/marked-pdf.js';
import { expectUntouched, postJson, type JsonAnswer } from '../helpers/native.js';
import { BYPASS_NAMES, startCanary, startServer, tableResolver, type Canary, type TestServer } from '../upstream/fetch/servers.js';

const schema = async (name: string) => JSON.parse(await readFile(join(projectRoot(), 'schemas/native-json', name), 'utf8')) as Record<string, unknown>;
const ajv = new Ajv2020({ strict: false });
ajv.addSchema(await schema('document-page.json'), 'document-page.json');
const VALID = { '/v1/ocr': ajv.compile(await schema('ocr-response.json')), '/v1/documents/analyze': ajv.compile(await schema('documents-analyze-response.json')) };

/** $1.50 per 1,000 pages (document-read) and $10.00 per 1,000 pages (document-layout). */
const READ_PAGE_NANO = 1_500_000n;
const LAYOUT_PAGE_NANO = 10_000_000n;
const FULL = 1_000_000_000n;
const PRIVATE_NAME = 'scans.intranet.test';

type Route = '/v1/ocr' | '/v1/documents/analyze';
/** Each route, the field its inline input goes in, its offering and its page price. */
const ROUTES = [
  { path: '/v1/ocr', field: 'image', model: 'document-read', kind: 'ocr', nano: READ_PAGE_NANO },
  { path: '/v1/documents/analyze', field: 'document', model: 'document-layout', kind: 'documents-analyze', nano: LAYOUT_PAGE_NANO },
] as const;

describeStore(`OCR and document analysis (${storeKind})`, () => {
  let t: TestGateway;
  let copy: ConfigCopy;
  let canary: Canary;
  let allowed: TestServer;
  let served = 0;
  const clock = new ManualClock();
  const resolver = tableResolver({ ...BYPASS_NAMES, [PRIVATE_NAME]: ['10.20.30.40'] });
  const docs: Record<string, Buffer> = {};

  beforeAll(async () => {
    docs.one = await pdfOf(1, 'Quarterly report');
    docs.two = await pdfOf(2);
    docs.seven = await pdfOf(7);
    docs.docx = await docxOf(['A memo.', 'Second paragraph.']);
    canary = await startCanary();
    allowed = await startServer({
      '/report.pdf': (_req, res) => { served += 1; res.writeHead(200, { 'content-type': 'application/pdf' }).end(docs.two); },
      // A server lying about its type: the bytes are sniffed, never the header.
      '/scan.png': (_req, res) => res.writeHead(200, { 'content-type': 'image/png' }).end(jpeg(640, 480)),
      '/to-canary': (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${canary.port}/report.pdf` }).end(),
      '/to-private': (_req, res) => res.writeHead(302, { location: `https://${PRIVATE_NAME}/report.pdf` }).end(),
    });
    copy = await copyConfig();
    await copy.editYaml('gateway.config.yaml', (doc) => { doc.url_inputs = { allow_hosts: [`127.0.0.1:${allowed.port}`] }; });
    await copy.editYaml('providers/azure-document-intelligence.yaml', (doc) => {
      for (const op of Object.values(doc.operations) as Array<{ poll: Record<string, number> }>) Object.assign(op.poll, { interval_ms: 20, deadline_ms: 1500 });
    });
    t = await startTestGateway({ configFile: copy.configFile, resolver, clock });
  });
  afterAll(async () => {
    await t?.dispose();
    await canary?.close();
    await allowed?.close();
    if (copy) await rm(copy.dir, { recursive: true, force: true });
  });
  beforeEach(async () => { await t.clearFaults(); });

  const post = (path: Route, key: string, body: unknown): Promise<JsonAnswer> => postJson(t, path, key, body, (a) => {
    if (a.status === 200) expect(VALID[path](a.json), JSON.stringify(VALID[path].errors)).toBe(true);
  });
  const b64 = (bytes: Buffer) => bytes.toString('base64');
  const url = (path: string) => `http://127.0.0.1:${allowed.port}${path}`;

  /** Spec 4.7: authorize, PUT with exactly the returned method and headers, finalize (unless `finalize` is false). */
  async function temporaryFile(key: string, purpose: string, bytes: Buffer, contentType = 'application/pdf', finalize = true): Promise<string> {
    const a = await postJson(t, '/v1/gateway/files/upload-authorizations', key, { purpose, content_type: contentType, byte_size: bytes.length });
    expect(a.status, JSON.stringify(a.json)).toBe(200);
    const put = await fetch(a.json.upload_url, { method: a.json.method, headers: a.json.headers, body: new Uint8Array(bytes) });
    expect(put.status).toBe(200);
    if (finalize) expect((await postJson(t, `/v1/gateway/files/${a.json.file_id}/finalize`, key, undefined)).status).toBe(200);
    return a.json.file_id as string;
  }

  /** The bill of one answer: `pages` in the body and headers, its usage row, exact. */
  async function expectPages(account: { id: string }, a: JsonAnswer, route: (typeof ROUTES)[number], pages: number): Promise<bigint> {
    expect(a.status, JSON.stringify(a.json).slice(0, 300)).toBe(200);
    expect(a.json.usage).toEqual({ pages });
    expect(a.json.pages).toHaveLength(pages);
    const amount = route.nano * BigInt(pages);
    expect(a.headers.get('x-gateway-pages')).toBe(String(pages));
    expect(a.headers.get('x-gateway-cost-usd')).toBe((Number(amount) / 1e9).toString());
    const rows = (await t.usage(account.id)).data;
    expect(rows.filter((r) => r.requestId === a.headers.get('x-request-id')).map((r) => ({ kind: r.kind, unit: r.unit, quantity: r.quantity, amount: r.amountNano, model: r.model })))
      .toEqual([{ kind: route.kind, unit: 'page', quantity: BigInt(pages), amount, model: route.model }]);
    return amount;
  }

  it('reads PDFs of 1, 2 and 7 pages and bills each page the upstream reports, to the nano-dollar', async () => {
    const account = await t.account('1');
    const ocr = ROUTES[0];
    let spent = 0n;
    for (const [doc, pages] of [[docs.one!, 1], [docs.two!, 2], [docs.seven!, 7]] as const) {
      const a = await post('/v1/ocr', account.key, { image: b64(doc) });
      spent += await expectPages(account, a, ocr, pages);
      expect(a.json).toMatchObject({ object: 'ocr', model: 'document-read' });
      expect(a.json.pages.map((p: { page_number: number }) => p.page_number)).toEqual(Array.from({ length: pages }, (_, i) => i + 1));
      expect(a.json.pages[0]).toMatchObject({ unit: 'inch', width: 8.2639, height: 11.6944, lines: [{ text: `Page 1 of ${pages}` }, { text: 'Simulated read text.' }] });
      expect(a.json.text.split('\n')[0]).toBe(`Page 1 of ${pages}`);
    }
    // 1 + 2 + 7 pages at $0.0015: $0.015.
    expect(spent).toBe(15_000_000n);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: FULL - spent, heldNano: 0n, openHolds: 0 });
  });

  it('analyzes a layout: content, paragraphs, a table; a PNG and a JPEG are one page each in pixels', async () => {
    const account = await t.account('1');
    const layout = ROUTES[1];
    const a = await post('/v1/documents/analyze', account.key, { document: `data:application/pdf;base64,${b64(docs.two!)}`, content_format: 'markdown' });
    await expectPages(account, a, layout, 2);
    expect(a.json).toMatchObject({ object: 'document.analysis', model: 'document-layout', content_format: 'markdown', key_value_pairs: [] });
    expect(a.json.content.startsWith('# Page 1 of 2\n')).toBe(true);
    expect(a.json.paragraphs[0]).toEqual({ role: 'title', content: 'Page 1 of 2' });
    expect(a.json.tables).toEqual([{ row_count: 2, column_count: 2, page_numbers: [1], cells: [
      { kind: 'columnHeader', row_index: 0, column_index: 0, row_span: 1, column_span: 1, content: 'Item' },
      { kind: 'columnHeader', row_index: 0, column_index: 1, row_span: 1, column_span: 1, content: 'Pages' },
      { kind: 'content', row_index: 1, column_index: 0, row_span: 1, column_span: 1, content: 'Document' },
      { kind: 'content', row_index: 1, column_index: 1, row_span: 1, column_span: 1, content: '2' },
    ] }]);
    expect(a.json.documents).toBeUndefined();
    const image = await post('/v1/documents/analyze', account.key, { document: b64(png(120, 80, 3)) });
    await expectPages(account, image, layout, 1);
    expect(image.json.pages[0]).toMatchObject({ page_number: 1, unit: 'pixel', width: 120, height: 80 });
    const photo = await post('/v1/ocr', account.key, { image: `data:image/jpeg;base64,${b64(jpeg(64, 96))}` });
    await expectPages(account, photo, ROUTES[0], 1);
    expect(photo.json.pages[0]).toMatchObject({ unit: 'pixel', width: 64, height: 96 });
    // 3 layout pages at $0.01 and 1 read page at $0.0015.
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: FULL - 31_500_000n, heldNano: 0n, openHolds: 0 });
  });

  it('bills only the pages processed: a page range, a partial result', async () => {
    const account = await t.account('1');
    const range = await post('/v1/ocr', account.key, { image: b64(docs.seven!), pages: '2-3,6', locale: 'en' });
    await expectPages(account, range, ROUTES[0], 3);
    expect(range.json.pages.map((p: { page_number: number }) => p.page_number)).toEqual([2, 3, 6]);
    const partial = await post('/v1/documents/analyze', account.key, { document: b64(await markedPdf(7, 'sim:partial')) });
    await expectPages(account, partial, ROUTES[1], 4);
    expect(await t.settled(account.id)).toMatchObject({ balanceNano: FULL - 3n * READ_PAGE_NANO - 4n * LAYOUT_PAGE_NANO, heldNano: 0n, openHolds: 0 });
  });

  it('reserves every page of the input: a balance below it is a 402 with nothing upstream', async () => {
    // 7 pages of layout hold $0.07; the account has $0.05.
    const account = await t.account('0.05');
    const before = t.sim.requests;
    const a = await post('/v1/documents/analyze', account.key, { document: b64(docs.seven!) });
    expect(a.status, JSON.stringify(a.json)).toBe(402);
    expect(t.sim.requests).toBe(before);
    await expectUntouched(t, account, 50_000_000n);
  });

  it('takes every input method on both routes: base64, data URL, an allow-listed URL, OCR_INPUT and DOCUMENT_INPUT files', async () => {
    const account = await t.account('1');
    const fetched = served;
    const ocrFile = await temporaryFile(account.key, 'OCR_INPUT', docs.two!);
    const documentFile = await temporaryFile(account.key, 'DOCUMENT_INPUT', docs.two!);
    for (const route of ROUTES) {
      const inputs: Array<Record<string, string>> = [
        { [route.field]: b64(docs.two!) },
        { [route.field]: `data:application/pdf;base64,${b64(docs.two!)}` },
        { url: url('/report.pdf') },
        { file_id: ocrFile },
        { file_id: documentFile },
      ];
      for (const input of inputs) {
        const a = await post(route.path, account.key, { ...input, model: route.model });
        await expectPages(account, a, route, 2);
        expect(a.json.pages[1].page_number, JSON.stringify(input).slice(0, 60)).toBe(2);
      }
    }
    expect(served - fetched).toBe(2);
    // A URL's bytes are sniffed, not its header: the "PNG" is a JPEG, read as one page of its size.
    const sniffed = await post('/v1/ocr', account.key, { url: url('/scan.png') });
    await expectPages(account, sniffed, ROUTES[0], 1);
    expect(sniffed.json.pages[0]).toMatchObject({ width: 640, height: 480, unit: 'pixel' });
    // Any key of the same account may use the files (spec 2).
    const { key: second } = await t.gw.runtime.ledger.createKey(account.id);
    expect((await post('/v1/documents/analyze', second, { file_id: ocrFile })).status).toBe(200);
  });

  it('takes Office documents for analysis only; OCR refuses them by their bytes', async () => {
    const account = await t.account('1');
    const memo = await post('/v1/documents/analyze', account.key, { document: b64(docs.docx!) });
    await expectPages(account, memo, ROUTES[1], 1);
    const refused = await post('/v1/ocr', account.key, { image: b64(docs.docx!) });
    expect([refused.status, refused.json.error.param]).toEqual([400, 'image']);
    expect(refused.json.error.message).toMatch(/the content is application\/vnd\.openxmlformats-officedocument\.wordprocessingml\.document; expected application\/pdf/);
  });

  it('refuses none or two input methods, naming the fields, with nothing reserved', async () => {
    const account = await t.account('1');
    const pdf = b64(docs.one!);
    const fetched = served;
    for (const route of ROUTES) {
      const f = route.field;
      const cases: Array<[Record<string, unknown>, string, RegExp]> = [
        [{}, f, new RegExp(`^Missing input: provide exactly one of '${f}', 'url' or 'file_id'\\.$`)],
        [{ pages: '1' }, f, /exactly one of/],
        [{ [f]: pdf, url: url('/report.pdf') }, 'url', new RegExp(`this request has '${f}' and 'url'`)],
        [{ url: url('/report.pdf'), file_id: 'tfile_000000000000000000000000' }, 'file_id', /this request has 'url' and 'file_id'/],
        [{ [f]: pdf, url: url('/report.pdf'), file_id: 'tfile_000000000000000000000000' }, 'url', /'url' and 'file_id'/],
        [{ [f]: pdf, pages: 'first' }, 'pages', /pages/],
        [{ [f]: pdf, features: ['barcodes'] }, 'features', /features/],
      ];
      for (const [body, param, message] of cases) {
        const a = await post(route.path, account.key, body);
        expect([a.status, a.json.error.code, a.json.error.param], `${route.path} ${JSON.stringify(body).slice(0, 80)}`).toEqual([400, 'invalid_request', param]);
        expect(a.json.error.message).toMatch(message);
      }
    }
    // Refused by the request schema before any URL is fetched.
    expect(served).toBe(fetched);
    await expectUntouched(t, account, FULL);
  });

  it('refuses a truncated PDF, text, an image too small for the vendor and bad base64, with nothing reserved or sent', async () => {
    const account = await t.account('1');
    const before = t.sim.requests;
    const cut = truncated(docs.seven!);
    const file = await temporaryFile(account.key, 'OCR_INPUT', cut);
    for (const route of ROUTES) {
      const f = route.field;
      const cases: Array<[Record<string, unknown>, string, RegExp]> = [
        [{ [f]: b64(cut) }, f, /PDF is incomplete|could not be parsed/],
        [{ [f]: `data:application/pdf;base64,${b64(cut)}` }, f, /PDF is incomplete|could not be parsed/],
        [{ file_id: file }, f, /PDF is incomplete|could not be parsed/],
        [{ [f]: b64(Buffer.from('Just some text, not a document.')) }, f, /not a recognised file type/],
        [{ [f]: b64(png(20, 20)) }, f, /20 x 20 pixels; it must be from 50 x 50/],
        [{ [f]: 'not base64 at all!' }, f, /expected base64, a data URL/],
      ];
      for (const [body, param, message] of cases) {
        const a = await post(route.path, account.key, body);
        expect([a.status, a.json.error.param], `${route.path} ${JSON.stringify(body).slice(0, 60)}`).toEqual([400, param]);
        expect(a.json.error.message).toMatch(message);
      }
    }
    expect(t.sim.requests).toBe(before);
    await expectUntouched(t, account, FULL);
  });

  it('refuses URLs: loopback not allowed, a redirect from the allowed host to a refused one, a name resolving to a private address', async () => {
    const account = await t.account('1');
    for (const route of ROUTES) {
      const cases: Array<[string, RegExp]> = [
        [`http://127.0.0.1:${canary.port}/report.pdf`, /^url: only https URLs are accepted/],
        [`https://127.0.0.1:${canary.port}/report.pdf`, /^url: the URL's host is /],
        [`https://localhost:${canary.port}/report.pdf`, /^url: the URL's host resolves to /],
        [url('/to-canary'), /redirects to a refused URL/],
        [url('/to-private'), /redirects to a refused URL/],
        [`https://${PRIVATE_NAME}/report.pdf`, /^url: the URL's host resolves to /],
        ['file:///etc/passwd', /^url: expected a data URL .* or an https URL\./],
      ];
      for (const [target, message] of cases) {
        const a = await post(route.path, account.key, { url: target });
        expect([a.status, a.json.error.param], target).toEqual([400, 'url']);
        expect(a.json.error.message).toMatch(message);
      }
    }
    expect(canary.connections()).toBe(0);
    expect(resolver.calls).toContain(PRIVATE_NAME);
    await expectUntouched(t, account, FULL);
  });

  it('refuses another account\'s file (404), the wrong purpose (400) and a pending file, with nothing reserved', async () => {
    const account = await t.account('1');
    const other = await t.account('1');
    const theirs = await temporaryFile(other.key, 'OCR_INPUT', docs.one!);
    const vision = await temporaryFile(account.key, 'VISION_INPUT', png(64, 64), 'image/png');
    const pending = await temporaryFile(account.key, 'DOCUMENT_INPUT', docs.one!, 'application/pdf', false);
    for (const route of ROUTES) {
      const cases: Array<[string, number, string]> = [
        [theirs, 404, 'file_not_found'],
        ['tfile_000000000000000000000000', 404, 'file_not_found'],
        [vision, 400, 'file_purpose_mismatch'],
        [pending, 400, 'file_not_finalized'],
      ];
      for (const [fileId, status, code] of cases) {
        const a = await post(route.path, account.key, { file_id: fileId });
        expect([a.status, a.json.error?.code], `${route.path} ${code}`).toEqual([status, code]);
      }
      expect((await post(route.path, account.key, { file_id: vision })).json.error.message).toMatch(/uploaded for VISION_INPUT/);
    }
    await expectUntouched(t, account, FULL);
  });

  it('polls a job until it succeeds, however many polls it takes', async () => {
    const account = await t.account('1');
    const before = t.sim.requests;
    const a = await post('/v1/ocr', account.key, { image: b64(await markedPdf(2, 'sim:polls=6')) });
    await expectPages(account, a, ROUTES[0], 2);
    // One submission, then six polls: notStarted, running four times, succeeded.
    expect(t.sim.requests - before).toBe(7);
  });

  it('charges nothing and releases the hold when the job fails, runs past the deadline or succeeds without a result', async () => {
    const account = await t.account('1');
    for (const route of ROUTES) {
      const failed = await post(route.path, account.key, { [route.field]: b64(await markedPdf(3, 'sim:fail')) });
      expect([failed.status, failed.json.error.code, failed.json.error.message]).toEqual([502, 'upstream_error', 'The upstream job ended with status "failed".']);
      const late = await post(route.path, account.key, { [route.field]: b64(await markedPdf(3, 'sim:never')) });
      expect([late.status, late.json.error.code]).toEqual([504, 'upstream_timeout']);
      // The first poll answers running; the fault drops the result from the second, succeeded one.
      await t.fault({ omit_usage: true }, 'azure-document-intelligence');
      const empty = await post(route.path, account.key, { [route.field]: b64(docs.two!) });
      expect([empty.status, empty.json.error.code]).toEqual([502, 'upstream_error']);
      expect(empty.json.error.message).toMatch(/malformed/);
      await t.clearFaults();
    }
    await expectUntouched(t, account, FULL);
  });

  it('charges nothing when the submission fails upstream; a 429 keeps its retry-after', async () => {
    const account = await t.account('1');
    // Both attempts of the request: the first and its one retry on the same deployment (issue 29).
    await t.fault({ status: 503, times: 2 }, 'azure-document-intelligence');
    expect((await post('/v1/ocr', account.key, { image: b64(docs.one!) })).status).toBe(502);
    await t.fault({ status: 429, times: 1 }, 'azure-document-intelligence');
    const limited = await post('/v1/documents/analyze', account.key, { document: b64(docs.one!) });
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '7']);
    await expectUntouched(t, account, FULL);
  });

  // Last: it moves the gateway's clock a day on.
  it('refuses an expired file (404 file_expired) on both routes', async () => {
    const account = await t.account('1');
    const file = await temporaryFile(account.key, 'OCR_INPUT', docs.one!);
    clock.advance(24 * 3600_000 + 1000);
    for (const route of ROUTES) {
      const a = await post(route.path, account.key, { file_id: file });
      expect([a.status, a.json.error.code]).toEqual([404, 'file_expired']);
    }
    await expectUntouched(t, account, FULL);
  });
});
