/** Upstream answers read into a bounded buffer, refused past it; a cut body is a broken answer. */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readBounded } from '../../src/upstream/body.js';
import type { UpstreamResponse } from '../../src/upstream/client.js';

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
