/**
 * PDFs carrying the document intelligence simulator's scripted outcomes (src/sim/azure-document-
 * intelligence.ts): keywords in the PDF's metadata, e.g. `sim:fail`, `sim:never`, `sim:polls=4`,
 * `sim:partial`. A simulator convention only; a real vendor reads them as ordinary metadata.
 */
import { PDFDocument } from 'pdf-lib';
import { pdfOf } from './documents.js';

/** A PDF of `pages` pages (test/helpers/documents.ts pdfOf) whose keywords are `markers`. */
export async function markedPdf(pages: number, ...markers: string[]): Promise<Buffer> {
  const pdf = await PDFDocument.load(await pdfOf(pages), { updateMetadata: false });
  pdf.setKeywords(markers);
  return Buffer.from(await pdf.save({ useObjectStreams: false }));
}
