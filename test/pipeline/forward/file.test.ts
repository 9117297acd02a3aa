/** Binary answers: downloads named safely (the bounded read: test/upstream/body.test.ts). */
import { describe, expect, it } from 'vitest';
import { contentDisposition } from '../../../src/pipeline/forward/file.js';

describe('contentDisposition', () => {
  it('gives an ASCII fallback and the UTF-8 name, never a quote or a line break through', () => {
    expect(contentDisposition('report.docx')).toBe(`attachment; filename="report.docx"; filename*=UTF-8''report.docx`);
    expect(contentDisposition('Übersicht "final".docx')).toBe(`attachment; filename="_bersicht _final_.docx"; filename*=UTF-8''%C3%9Cbersicht%20%22final%22.docx`);
    expect(contentDisposition("it's (v2).pdf")).toBe(`attachment; filename="it's (v2).pdf"; filename*=UTF-8''it%27s%20%28v2%29.pdf`);
    expect(contentDisposition('a\r\nSet-Cookie: x.pdf')).not.toMatch(/[\r\n]/);
  });
});
