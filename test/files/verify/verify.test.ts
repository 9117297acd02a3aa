/** verifyContent: the sniffed or inspected type of real sample files against their declared type. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { normaliseType, verifyContent } from '../../../src/files/verify/index.js';

const fixture = (name: string): Buffer => readFileSync(new URL(`../../fixtures/files/${name}`, import.meta.url));
const OOXML = 'application/vnd.openxmlformats-officedocument';
const DOCX = `${OOXML}.wordprocessingml.document`;
const XLSX = `${OOXML}.spreadsheetml.sheet`;
const PPTX = `${OOXML}.presentationml.presentation`;

/** An ISO base media file that is only an `ftyp` box with the given major brand. */
const ftyp = (brand: string): Buffer => Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from(`ftyp${brand}\0\0\x02\0isommp41`, 'latin1')]);

describe('verifyContent', () => {
  it.each([
    ['sample.png', 'image/png', 'image/png'],
    ['sample.jpg', 'image/jpeg', 'image/jpeg'],
    ['sample.jpg', 'image/jpg', 'image/jpeg'],
    ['sample.pdf', 'application/pdf', 'application/pdf'],
    ['sample.pdf', 'Application/PDF; name="a.pdf"', 'application/pdf'],
    ['sample.wav', 'audio/wav', 'audio/wav'],
    ['sample.wav', 'audio/x-wav', 'audio/wav'],
    ['sample.wav', 'audio/wave', 'audio/wav'],
    ['sample.mp3', 'audio/mpeg', 'audio/mpeg'],
    ['sample.mp3', 'audio/mp3', 'audio/mpeg'],
    ['sample.docx', DOCX, DOCX],
    ['sample.xlsx', XLSX, XLSX],
    ['sample.pptx', PPTX, PPTX],
    ['sample.zip', 'application/zip', 'application/zip'],
    ['sample.pptx', 'application/zip', 'application/zip'],
    ['sample.txt', 'text/plain', 'text/plain'],
    ['sample.txt', 'text/plain; charset=utf-8', 'text/plain'],
    ['sample.csv', 'text/csv', 'text/csv'],
    ['sample.csv', 'text/plain', 'text/plain'],
    ['sample.json', 'application/json', 'application/json'],
    ['sample.txt', ' TEXT/Markdown ', 'text/markdown'],
  ])('accepts %s declared as %s, recorded as %s', async (file, declared, recorded) => {
    expect(await verifyContent(fixture(file), declared)).toEqual({ ok: true, contentType: recorded });
  });

  it('accepts MP4 brands under the audio and video names the container allows', async () => {
    expect(await verifyContent(ftyp('M4A '), 'audio/mp4')).toEqual({ ok: true, contentType: 'audio/mp4' });
    expect(await verifyContent(ftyp('M4A '), 'audio/x-m4a')).toEqual({ ok: true, contentType: 'audio/mp4' });
    expect(await verifyContent(ftyp('isom'), 'audio/mp4')).toEqual({ ok: true, contentType: 'audio/mp4' });
    expect(await verifyContent(ftyp('isom'), 'video/mp4')).toEqual({ ok: true, contentType: 'video/mp4' });
    const audioAsVideo = await verifyContent(ftyp('M4A '), 'video/mp4');
    expect(!audioAsVideo.ok && audioAsVideo.reason).toBe('The bytes are an MP4 audio file (audio/mp4), not the declared video/mp4.');
  });

  it('refuses a PNG declared as PDF, naming both types', async () => {
    expect(await verifyContent(fixture('sample.png'), 'application/pdf')).toEqual({
      ok: false,
      reason: 'The bytes are a PNG image (image/png), not the declared application/pdf.',
    });
    const zipAsJpeg = await verifyContent(fixture('sample.zip'), 'image/jpeg');
    expect(!zipAsJpeg.ok && zipAsJpeg.reason).toBe('The bytes are a zip archive (application/zip), not the declared image/jpeg.');
    const docxAsPdf = await verifyContent(fixture('sample.docx'), 'application/pdf');
    expect(!docxAsPdf.ok && docxAsPdf.reason).toBe(`The bytes are a Word document (${DOCX}), not the declared application/pdf.`);
  });

  it('refuses bytes nothing recognises under a binary type', async () => {
    const text = await verifyContent(fixture('sample.txt'), 'image/png');
    expect(!text.ok && text.reason).toBe('The bytes are not recognisable as the declared image/png.');
    expect((await verifyContent(Buffer.alloc(0), 'audio/mpeg')).ok).toBe(false);
  });

  it('refuses text with NUL bytes, invalid UTF-8 or a recognisable binary signature', async () => {
    const nul = await verifyContent(Buffer.from('hello\0world\n'), 'text/plain');
    expect(!nul.ok && nul.reason).toBe('The bytes contain NUL characters, so they are not the declared text/plain.');
    const latin1 = await verifyContent(fixture('not-utf8.txt'), 'text/csv');
    expect(!latin1.ok && latin1.reason).toBe('The bytes are not valid UTF-8 text, so they are not the declared text/csv.');
    const xml = await verifyContent(Buffer.from('<?xml version="1.0"?><a/>'), 'text/plain');
    expect(!xml.ok && xml.reason).toBe('The bytes are content of type application/xml, not the declared text/plain.');
    expect((await verifyContent(fixture('sample.png'), 'text/plain')).ok).toBe(false);
  });

  it('refuses JSON that does not parse', async () => {
    const broken = await verifyContent(Buffer.from('{"a": 1,'), 'application/json');
    expect(!broken.ok && broken.reason).toBe('The bytes are not valid JSON, so they are not the declared application/json.');
    expect((await verifyContent(fixture('sample.csv'), 'application/json')).ok).toBe(false);
  });

  it('refuses a package of the wrong kind, a plain zip as a document, and bombs', async () => {
    expect(await verifyContent(fixture('sample.docx'), PPTX)).toEqual({ ok: false, reason: 'The package is a Word document, not a PowerPoint presentation.' });
    expect(await verifyContent(fixture('sample.zip'), DOCX)).toEqual({
      ok: false,
      reason: 'The zip archive has no [Content_Types].xml, so it is not a Word document.',
    });
    const bomb = await verifyContent(fixture('bomb.zip'), 'application/zip');
    expect(!bomb.ok && bomb.reason).toBe('The zip entry zeros.bin inflates more than 200 times its compressed size.');
    const bounded = await verifyContent(fixture('bomb.zip'), DOCX, { maxTotalInflatedBytes: 1024 * 1024 });
    expect(!bounded.ok && bounded.reason).toBe('The zip archive inflates to more than 1048576 bytes.');
    const many = await verifyContent(fixture('sample.xlsx'), XLSX, { maxEntries: 4 });
    expect(!many.ok && many.reason).toBe('The zip archive lists 5 entries, more than the 4 allowed.');
  });

  it('refuses a truncated package cleanly', async () => {
    const docx = fixture('sample.docx');
    const result = await verifyContent(docx.subarray(0, docx.length - 30), DOCX);
    expect(result).toEqual({ ok: false, reason: 'The bytes are not a complete zip archive (it may be truncated).' });
    expect((await verifyContent(fixture('sample.pdf'), 'application/zip')).ok).toBe(false);
  });

  it.each(['application/x-msdownload', 'text/html', 'image/svg+xml', '', 'constructor'])('refuses the unsupported type "%s"', async (declared) => {
    const result = await verifyContent(fixture('sample.txt'), declared);
    expect(!result.ok && result.reason).toMatch(/^The content type .+ is not supported for uploads\.$/);
  });

  it('normalises declared types', () => {
    expect(normaliseType('Image/JPG ; q=1')).toBe('image/jpeg');
    expect(normaliseType('audio/x-m4a')).toBe('audio/mp4');
    expect(normaliseType('toString')).toBe('tostring');
  });
});
