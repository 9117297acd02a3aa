/**
 * The Azure Document Intelligence translators beyond their golden fixtures (spec 4.12; vendor spec
 * DocumentIntelligence-2025-09-01.json): the input checks made before anything is reserved, the
 * query parameters, the finished operations the gateway refuses as malformed (a 502, nothing billed),
 * the pages billed for a partial result, and the Azure error bodies (test/fixtures/azure-di/).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/errors.js';
import { projectRoot } from '../../src/paths.js';
import { createNativeJsonToAzureDiLayout } from '../../src/translate/native-json--azure-di-layout/index.js';
import { createNativeJsonToAzureDiRead } from '../../src/translate/native-json--azure-di-read/index.js';
import { png } from '../helpers/images.js';
import { jpeg } from '../helpers/jpeg.js';

const fixture = (name: string): Record<string, unknown> => JSON.parse(readFileSync(join(projectRoot(), 'test/fixtures/azure-di', name), 'utf8')) as Record<string, unknown>;
const pdf = readFileSync(join(projectRoot(), 'test/fixtures/files/sample.pdf'));

/** The GatewayError `fn` throws (the test fails when it throws nothing). */
function thrown(fn: () => unknown): GatewayError {
  try { fn(); } catch (error) { if (error instanceof GatewayError) return error; throw error; }
  throw new Error('expected a GatewayError');
}

const read = (body: Record<string, unknown>) => createNativeJsonToAzureDiRead({ model: 'document-read', ...body });
const layout = (body: Record<string, unknown>) => createNativeJsonToAzureDiLayout({ model: 'document-layout', ...body });

describe('the analyze request', () => {
  it('sends the bytes as base64Source, from a data URL or plain base64, never a URL', () => {
    const base64 = pdf.toString('base64');
    expect(read({ image: `data:application/pdf;base64,${base64}` }).request({}, undefined as never)).toEqual({ base64Source: base64 });
    expect(layout({ document: base64 }).request({}, undefined as never)).toEqual({ base64Source: base64 });
    const image = jpeg(64, 56);
    expect(read({ image: `data:image/jpeg;base64,${image.toString('base64')}` }).request({}, undefined as never)).toEqual({ base64Source: image.toString('base64') });
  });

  it('maps pages, locale and content_format to the vendor\'s query, with code point offsets', () => {
    const t = layout({ document: pdf.toString('base64') });
    expect(t.query!({ pages: '1-3,5', locale: 'fr-CA', content_format: 'markdown' })).toEqual({
      stringIndexType: ['unicodeCodePoint'], pages: ['1-3,5'], locale: ['fr-CA'], outputContentFormat: ['markdown'],
    });
    expect(t.query!({})).toEqual({ stringIndexType: ['unicodeCodePoint'] });
  });

  it('refuses input that is not base64, and images outside 50 to 10,000 pixels a side, naming the field', () => {
    const cases: Array<[() => unknown, string, RegExp]> = [
      [() => read({ image: 'not base64!' }), 'image', /'image' is not valid base64/],
      [() => layout({ document: 'data:application/pdf;base64,' }), 'document', /'document' is not valid base64/],
      [() => read({ image: png(49, 60).toString('base64') }), 'image', /49 x 60 pixels; it must be from 50 x 50 to 10000 x 10000/],
      [() => layout({ document: `data:image/jpeg;base64,${jpeg(10_001, 64).toString('base64')}` }), 'document', /10001 x 64 pixels/],
    ];
    for (const [create, param, message] of cases) {
      const error = thrown(create);
      expect([error.code, error.extra.param]).toEqual(['invalid_request', param]);
      expect(error.message).toMatch(message);
    }
    // The limits themselves are accepted.
    expect(() => read({ image: png(50, 10_000).toString('base64') })).not.toThrow();
  });

  it('does not stream', () => {
    expect(thrown(() => read({ image: pdf.toString('base64') }).stream('document-read')).message).toBe('OCR does not stream.');
    expect(thrown(() => layout({ document: pdf.toString('base64') }).stream('document-layout')).message).toBe('Document analysis does not stream.');
  });
});

describe('the finished operation', () => {
  const translators = [read({ image: pdf.toString('base64') }), layout({ document: pdf.toString('base64') })];

  it('bills only the pages a partial result reports processed', () => {
    const answer = read({ image: pdf.toString('base64') }).response(fixture('partial-seven-page-pdf.json'), 'document-read');
    expect(answer.quantities).toEqual({ pages: 3 });
    expect(answer.body.usage).toEqual({ pages: 3 });
    expect(answer.body.text).toBe('Page 1\nPage 2\nPage 3');
    expect((answer.body.pages as Array<{ page_number: number }>).map((p) => p.page_number)).toEqual([1, 2, 3]);
  });

  it('is a 502 when it succeeded without a result, or with a malformed one: nothing to bill', () => {
    for (const name of ['succeeded-without-result.json', 'pages-not-a-list.json', 'word-without-content.json']) {
      for (const t of translators) {
        const error = thrown(() => t.response(fixture(name), 'm'));
        expect([error.code, error.status], name).toEqual(['upstream_error', 502]);
        expect(error.message).toMatch(/malformed (OCR|document analysis) answer/);
      }
    }
  });

  it('is a 502 naming the status when a failed operation reaches it', () => {
    const error = thrown(() => translators[0]!.response(fixture('failed-operation.json'), 'document-read'));
    expect([error.code, error.message]).toEqual(['upstream_error', 'The upstream OCR operation ended with status "failed".']);
  });
});

describe('Azure error answers', () => {
  const t = read({ image: pdf.toString('base64') });

  it('shows the inner message of a request error as a 400', () => {
    const error = t.error(400, fixture('error-invalid-content.json'), {});
    expect([error.code, error.status, error.message]).toEqual(['invalid_request', 400, 'The file is corrupted or format is unsupported. Refer to documentation for the list of supported formats.']);
  });

  it('never shows an authentication message (it can echo the key), and keeps a 429\'s retry-after', () => {
    const denied = t.error(401, fixture('error-unauthorized.json'), {});
    expect([denied.code, denied.status]).toEqual(['upstream_error', 502]);
    expect(denied.message).not.toContain('xyz-test-not-real');
    const limited = t.error(429, { error: { code: '429', message: 'Rate limit.' } }, { 'retry-after': '3' });
    expect([limited.code, limited.status, limited.extra.headers]).toEqual(['upstream_rate_limited', 429, { 'retry-after': '3' }]);
    expect(t.error(503, null, {}).status).toBe(502);
  });
});
