/**
 * The simulator playing Azure Document Intelligence (src/sim/azure-document-intelligence.ts): the
 * analyze request checked as the vendor spec defines it (api-version, JSON AnalyzeDocumentRequest with
 * exactly one source, query parameters), a 202 with an Operation-Location, then the AnalyzeOperation
 * running until its poll count and succeeded with one page per PDF page (one for an image), the
 * scripted outcomes in a PDF's keywords, the `pages` range, and the faults scoped to
 * azure-document-intelligence.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_POLLS } from '../../src/sim/azure-document-intelligence.js';
import { startSimulator, type Simulator } from '../../src/sim/server.js';
import { storeKind } from '../helpers/db.js';
import { pdfOf, truncated } from '../helpers/documents.js';
import { png } from '../helpers/images.js';
import { jpeg } from '../helpers/jpeg.js';
import { markedPdf } from '../helpers/marked-pdf.js';
import { simCall, type RawAnswer } from './helpers.js';

const ANALYZE = '/documentintelligence/documentModels/prebuilt-read:analyze?api-version=2025-09-01';
const LAYOUT = '/documentintelligence/documentModels/prebuilt-layout:analyze?api-version=2025-09-01';

describe.runIf(storeKind === 'pglite')('simulated Azure Document Intelligence', () => {
  let sim: Simulator;
  beforeAll(async () => { sim = await startSimulator(); });
  afterAll(async () => { await sim?.close(); });
  beforeEach(async () => { await simCall(sim.url, '/__sim/faults', 'DELETE'); });

  const submit = (bytes: Buffer, path = ANALYZE) => simCall(sim.url, path, 'POST', { base64Source: bytes.toString('base64') });
  const location = (a: RawAnswer): string => a.headers['operation-location'] as string;
  /** Polls until the status is not running (at most `max` polls); the statuses seen and the last answer. */
  async function finish(a: RawAnswer, max = 10): Promise<{ statuses: string[]; last: any }> {
    const statuses: string[] = [];
    let last: any;
    for (let i = 0; i < max; i++) {
      last = (await simCall(location(a), '')).json;
      statuses.push(last.status);
      if (last.status !== 'running' && last.status !== 'notStarted') break;
    }
    return { statuses, last };
  }

  it('answers 202 with an Operation-Location, then running, then succeeded with one page per PDF page', async () => {
    for (const pages of [1, 2, 7]) {
      const a = await submit(await pdfOf(pages));
      expect([a.status, a.text]).toEqual([202, '']);
      expect(location(a)).toMatch(new RegExp(`^${sim.url}/documentintelligence/documentModels/prebuilt-read/analyzeResults/di_sim_[A-Za-z0-9_-]+\\?api-version=2025-09-01$`));
      const { statuses, last } = await finish(a);
      expect(statuses).toEqual([...new Array<string>(DEFAULT_POLLS - 1).fill('running'), 'succeeded']);
      expect(last.analyzeResult).toMatchObject({ apiVersion: '2025-09-01', modelId: 'prebuilt-read', stringIndexType: 'textElements', contentFormat: 'text' });
      expect(last.analyzeResult.pages.map((p: any) => [p.pageNumber, p.unit, p.width, p.height])).toEqual(
        Array.from({ length: pages }, (_, i) => [i + 1, 'inch', 8.2639, 11.6944]));
      expect(last.analyzeResult.content.split('\n')[0]).toBe(`Page 1 of ${pages}`);
    }
  });

  it('reads an image as one page in pixels; layout adds paragraphs and a table', async () => {
    const image = (await finish(await submit(png(120, 80)))).last.analyzeResult;
    expect(image.pages).toHaveLength(1);
    expect(image.pages[0]).toMatchObject({ pageNumber: 1, unit: 'pixel', width: 120, height: 80 });
    const photo = (await finish(await submit(jpeg(64, 96), LAYOUT))).last.analyzeResult;
    expect(photo.pages[0]).toMatchObject({ unit: 'pixel', width: 64, height: 96 });
    expect(photo.tables[0]).toMatchObject({ rowCount: 2, columnCount: 2 });
    expect(photo.paragraphs[0]).toMatchObject({ role: 'title', content: 'Page 1 of 1' });
    // Every span points at its text in `content`.
    for (const w of photo.pages[0].words) expect(photo.content.slice(w.span.offset, w.span.offset + w.span.length)).toBe(w.content);
  });

  it('analyzes only the pages asked for, in the asked index type and content format', async () => {
    const a = await submit(await pdfOf(7), `${LAYOUT}&pages=2-3,6,9&stringIndexType=unicodeCodePoint&outputContentFormat=markdown&features=keyValuePairs`);
    const result = (await finish(a)).last.analyzeResult;
    expect(result.pages.map((p: any) => p.pageNumber)).toEqual([2, 3, 6]);
    expect(result).toMatchObject({ stringIndexType: 'unicodeCodePoint', contentFormat: 'markdown' });
    expect(result.content.startsWith('# Page 2 of 7\n')).toBe(true);
    expect(result.keyValuePairs).toEqual([expect.objectContaining({ key: expect.objectContaining({ content: 'Pages:' }), value: expect.objectContaining({ content: '3' }) })]);
    const none = await submit(await pdfOf(2), `${ANALYZE}&pages=5`);
    expect([none.status, none.json.error.innererror.code]).toEqual([400, 'InvalidContentRange']);
  });

  it('ends as the PDF\'s keywords script: failed, never, after N polls, partial', async () => {
    const failed = await finish(await submit(await markedPdf(1, 'sim:fail')));
    expect(failed.last).toMatchObject({ status: 'failed', error: { code: 'InternalServerError' } });
    expect(failed.last.analyzeResult).toBeUndefined();
    expect((await finish(await submit(await markedPdf(1, 'sim:never')), 6)).statuses).toEqual(['running', 'running', 'running', 'running', 'running', 'running']);
    expect((await finish(await submit(await markedPdf(1, 'sim:polls=4')))).statuses).toEqual(['notStarted', 'running', 'running', 'succeeded']);
    const partial = (await finish(await submit(await markedPdf(7, 'sim:partial')))).last.analyzeResult;
    expect(partial.pages.map((p: any) => p.pageNumber)).toEqual([1, 2, 3, 4]);
    expect(partial.warnings[0].code).toBe('PartialResult');
  });

  it('refuses what the vendor spec does not allow', async () => {
    const b64 = (await pdfOf(1)).toString('base64');
    const cases: Array<[string, unknown, number, string]> = [
      [ANALYZE.replace('2025-09-01', '2024-11-30'), { base64Source: b64 }, 404, '404'],
      [ANALYZE.replace('prebuilt-read', 'prebuilt-invoice'), { base64Source: b64 }, 404, 'ModelNotFound'],
      [ANALYZE, { urlSource: 'https://example.com/a.pdf' }, 400, 'InvalidContentSourceFormat'],
      [ANALYZE, { base64Source: b64, urlSource: 'https://example.com/a.pdf' }, 400, 'InvalidParameter'],
      [ANALYZE, { base64Source: b64, extra: 1 }, 400, 'InvalidParameter'],
      [ANALYZE, { base64Source: 'not base64!' }, 400, 'InvalidBase64Source'],
      [ANALYZE, { base64Source: truncated(Buffer.from(b64, 'base64')).toString('base64') }, 400, 'InvalidContent'],
      [ANALYZE, { base64Source: Buffer.from('just text').toString('base64') }, 400, 'InvalidContent'],
      [`${ANALYZE}&pages=first`, { base64Source: b64 }, 400, 'InvalidParameter'],
      [`${ANALYZE}&bogus=1`, { base64Source: b64 }, 400, 'InvalidParameter'],
    ];
    for (const [path, body, status, code] of cases) {
      const a = await simCall(sim.url, path, 'POST', body);
      expect([a.status, a.json.error.innererror?.code ?? a.json.error.code], path).toEqual([status, code]);
    }
    const raw = await simCall(sim.url, ANALYZE, 'POST', 'x', { 'content-type': 'application/pdf' });
    expect([raw.status, raw.json.error.innererror.code]).toEqual([400, 'InvalidContentType']);
    expect((await simCall(sim.url, '/documentintelligence/documentModels/prebuilt-read/analyzeResults/nope?api-version=2025-09-01')).status).toBe(404);
  });

  it('applies faults scoped to azure-document-intelligence; omit_usage drops the result of a succeeded poll', async () => {
    await simCall(sim.url, '/__sim/faults', 'POST', { model: 'azure-document-intelligence', fault: { status: 429, times: 1 } });
    const limited = await submit(await pdfOf(1));
    expect([limited.status, limited.headers['retry-after']]).toEqual([429, '7']);
    const a = await submit(await pdfOf(1));
    await simCall(location(a), '');
    await simCall(sim.url, '/__sim/faults', 'POST', { model: 'azure-document-intelligence', fault: { omit_usage: true, times: 1 } });
    const last = (await simCall(location(a), '')).json;
    expect(last.status).toBe('succeeded');
    expect(last.analyzeResult).toBeUndefined();
  });
});
