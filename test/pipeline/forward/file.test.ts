/** Binary answers: read into a bounded buffer, refused past it; downloads named safely. */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { contentDisposition, readBounded } from '../../../src/pipeline/forward/file.js';
import type { UpstreamResponse } from '../../../src/upstream/client.js';

function answer(chunks: Buffer[]): UpstreamResponse {
  return { status: 200, headers: {}, body: Readable.from(chunks) as unknown as UpstreamResponse['body'] };
}

describe('readBounded', () => {
  it('reads an answer up to its bound, exactly at it included', async () => {
    expect((await readBounded(answer([Buffer.from('ab'), Buffer.from('cd')]), 4)).toString()).toBe('abcd');
  });

  it('turns a body cut mid-way into a broken answer (502), not an unreachable upstream', async () => {
    const cut = Readable.from((async function* () { yield Buffer.from('ab'); throw Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }); })());
    const response = { status: 200, headers: {}, body: cut as unknown as UpstreamResponse['body'] };
    await expect(readBounded(response, 4)).rejects.toMatchObject({ code: 'upstream_error', status: 502, message: 'The upstream answer was cut before it completed.' });
  });

  it('refuses an answer past its bound as an upstream error (not billed)', async () => {
    await expect(readBounded(answer([Buffer.from('ab'), Buffer.from('cde')]), 4)).rejects.toMatchObject({ code: 'upstream_error', status: 502, message: 'The upstream provider sent a file larger than 4 bytes.' });
  });
});

describe('contentDisposition', () => {
  it('gives an ASCII fallback and the UTF-8 name, never a quote or a line break through', () => {
    expect(contentDisposition('report.docx')).toBe(`attachment; filename="report.docx"; filename*=UTF-8''report.docx`);
    expect(contentDisposition('Übersicht "final".docx')).toBe(`attachment; filename="_bersicht _final_.docx"; filename*=UTF-8''%C3%9Cbersicht%20%22final%22.docx`);
    expect(contentDisposition("it's (v2).pdf")).toBe(`attachment; filename="it's (v2).pdf"; filename*=UTF-8''it%27s%20%28v2%29.pdf`);
    expect(contentDisposition('a\r\nSet-Cookie: x.pdf')).not.toMatch(/[\r\n]/);
  });
});
