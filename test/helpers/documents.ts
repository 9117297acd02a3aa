/**
 * Real documents for the document, OCR and vision tests (issue 12): a DOCX built with the `docx`
 * library and PDFs of any page count built with `pdf-lib`, plus the malformed variants the tests
 * refuse (a truncated PDF). Each is deterministic for the same arguments.
 */
import { Document, Packer, Paragraph, TextRun } from 'docx';
import { PDFDocument, StandardFonts } from 'pdf-lib';

/** A DOCX whose body is one paragraph per entry of `paragraphs`. */
export async function docxOf(paragraphs: readonly string[]): Promise<Buffer> {
  const doc = new Document({
    creator: 'gateway tests',
    sections: [{ children: paragraphs.map((text) => new Paragraph({ children: [new TextRun(text)] })) }],
  });
  return Packer.toBuffer(doc);
}

/** A PDF of `pages` pages, each showing `Page <n>` and, when given, `text`. */
export async function pdfOf(pages: number, text = ''): Promise<Buffer> {
  const pdf = await PDFDocument.create();
  // Fixed dates keep the bytes the same from run to run.
  pdf.setCreationDate(new Date(Date.UTC(2026, 0, 1)));
  pdf.setModificationDate(new Date(Date.UTC(2026, 0, 1)));
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (let n = 1; n <= pages; n++) {
    const page = pdf.addPage([595, 842]);
    page.drawText(`Page ${n}${text ? `: ${text}` : ''}`, { x: 50, y: 780, size: 14, font });
  }
  return Buffer.from(await pdf.save({ useObjectStreams: false }));
}

/** The first `fraction` of a document's bytes: a PDF cut before its cross-reference table and %%EOF. */
export function truncated(data: Buffer, fraction = 0.6): Buffer {
  return data.subarray(0, Math.floor(data.length * fraction));
}
