/**
 * Documents checked by content (issue 12; spec 4.9): a DOCX built with the docx library is measured
 * (its text characters), PDFs built with pdf-lib are parsed (their pages), and what is not the
 * document asked for is refused saying what it is: a PDF as DOCX, a DOCX as PDF, a truncated PDF.
 */
import { describe, expect, it } from 'vitest';
import { describeBytes, documentPages, documentTextCharacters, measureDocx, measurePdf, tiffPages } from '../../../src/files/verify/documents.js';
import { docxOf, pdfOf, truncated } from '../../helpers/documents.js';
import { png } from '../../helpers/images.js';

/** A little-endian TIFF header with `pages` chained, empty image file directories. */
function tiffOf(pages: number): Buffer {
  const bytes = Buffer.alloc(8 + pages * 6);
  bytes.write('II', 0, 'latin1');
  bytes.writeUInt16LE(42, 2);
  bytes.writeUInt32LE(8, 4);
  for (let i = 0; i < pages; i++) {
    const at = 8 + i * 6;
    bytes.writeUInt16LE(0, at); // no entries
    bytes.writeUInt32LE(i + 1 < pages ? at + 6 : 0, at + 2);
  }
  return bytes;
}

describe('documents by content', () => {
  it('measures a DOCX: the code points of its text runs', async () => {
    const measured = await measureDocx(await docxOf(['Hello world.', 'Grüße & <tags> 😀']));
    expect(measured).toEqual({ ok: true, characters: 12 + 16 });
  });

  it('counts text runs with entities and attributes, nothing else', () => {
    expect(documentTextCharacters('<w:p><w:r><w:t xml:space="preserve"> a&amp;b </w:t></w:r><w:r><w:t>&#x1F600;</w:t></w:r><w:tab/></w:p>')).toBe(6);
  });

  it('refuses a PDF, a PNG and a plain zip as DOCX, saying what each is', async () => {
    expect(await measureDocx(await pdfOf(1))).toEqual({ ok: false, reason: 'The bytes are a PDF document.' });
    expect(await measureDocx(png(8, 8))).toEqual({ ok: false, reason: 'The bytes are a PNG image.' });
    const cut = await measureDocx(truncated(await docxOf(['x'])));
    expect(cut.ok).toBe(false);
  });

  it('counts the pages of PDFs of 1, 2 and 7 pages', async () => {
    for (const pages of [1, 2, 7]) expect(await measurePdf(await pdfOf(pages))).toEqual({ ok: true, pages });
  });

  it('refuses a truncated PDF, a DOCX and random bytes as PDF', async () => {
    expect(await measurePdf(truncated(await pdfOf(2)))).toEqual({ ok: false, reason: 'The PDF is incomplete: it has no end-of-file marker (it may be truncated).' });
    expect(await measurePdf(await docxOf(['x']))).toEqual({ ok: false, reason: 'The bytes are a Word document (DOCX).' });
    expect(await measurePdf(Buffer.from('%PDF-1.7\nnot really a pdf\n%%EOF\n'))).toEqual({ ok: false, reason: 'The PDF could not be parsed (it is malformed or truncated).' });
  });

  it('counts a TIFF\'s image file directories, and one page for other images', async () => {
    expect(tiffPages(tiffOf(3))).toBe(3);
    expect(tiffPages(Buffer.from('not a tiff'))).toBe(1);
    expect(await documentPages(tiffOf(4), 'image/tiff')).toEqual({ ok: true, pages: 4 });
    expect(await documentPages(png(8, 8), 'image/png')).toEqual({ ok: true, pages: 1 });
    expect(await documentPages(await pdfOf(7), 'application/pdf')).toEqual({ ok: true, pages: 7 });
  });

  it('describes unknown bytes', async () => {
    expect(await describeBytes(Buffer.from('hello'))).toBe('not a recognised document');
  });
});
