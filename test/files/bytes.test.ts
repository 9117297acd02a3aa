/**
 * The one bounded collector (src/files/bytes.ts): exactly the bound passes, one byte more is refused
 * with the caller's error, a declared length past the bound is refused unread, and a malformed
 * Content-Length never lets a larger body through.
 */
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { collectBounded, declaredLength, readAll, type ByteTally } from '../../src/files/bytes.js';
import { readRawBody, type RawBodySpec } from '../../src/bodies/raw.js';

class TooLarge extends Error {}
const tooLarge = (): Error => new TooLarge('too large');

/** A stream of `chunks` that records how many it was asked for. */
function source(chunks: string[]): Readable & { reads: number } {
  const queue = chunks.map((c) => Buffer.from(c));
  const stream = new Readable({
    read() {
      stream.reads += 1;
      this.push(queue.shift() ?? null);
    },
  }) as Readable & { reads: number };
  stream.reads = 0;
  return stream;
}

describe('declaredLength', () => {
  it('reads a plain non-negative integer', () => {
    expect([declaredLength('12'), declaredLength(' 12 '), declaredLength('0'), declaredLength('007')]).toEqual([12, 12, 0, 7]);
  });

  it('treats an absent or malformed header as absent', () => {
    for (const header of [undefined, null, '', 'abc', '-1', '1e3', '1.5', '0x10', '+5', '12 34', '99999999999999999999', ['4', '4']]) {
      expect(declaredLength(header), String(header)).toBeUndefined();
    }
  });
});

describe('collectBounded', () => {
  it('keeps a body of exactly the bound, in order', async () => {
    expect((await collectBounded(source(['ab', 'cd']), { maxBytes: 4, tooLarge })).toString()).toBe('abcd');
    expect((await collectBounded(source([]), { maxBytes: 0, tooLarge })).length).toBe(0);
  });

  it('refuses one byte more with the caller\'s error and stops the stream', async () => {
    const stream = source(['ab', 'cde', 'fgh']);
    await expect(collectBounded(stream, { maxBytes: 4, tooLarge })).rejects.toBeInstanceOf(TooLarge);
    expect(stream.destroyed).toBe(true);
  });

  it('does not let a malformed Content-Length past the bound: the streamed count refuses the body', async () => {
    for (const header of ['abc', '-1', '1e3', '']) {
      const read = collectBounded(source(['abcd', 'e']), { maxBytes: 4, declared: declaredLength(header), tooLarge });
      await expect(read, header).rejects.toBeInstanceOf(TooLarge);
    }
  });

  it('refuses a declared length over the bound before reading a byte; one at the bound is read', async () => {
    const refused = source(['abcde']);
    await expect(collectBounded(refused, { maxBytes: 4, declared: 5, tooLarge })).rejects.toBeInstanceOf(TooLarge);
    expect([refused.reads, refused.destroyed]).toEqual([0, true]);
    expect((await collectBounded(source(['abcd']), { maxBytes: 4, declared: 4, tooLarge })).toString()).toBe('abcd');
  });

  it('drains a refused stream to its end instead of destroying it, when asked', async () => {
    const stream = source(['abc', 'def', 'ghi']);
    const ended = finished(stream);
    await expect(collectBounded(stream, { maxBytes: 4, tooLarge, rest: 'drain' })).rejects.toBeInstanceOf(TooLarge);
    await ended;
    expect(stream.readableEnded).toBe(true);
    expect(stream.reads).toBe(4);
  });

  it('counts a shared tally across reads and refuses with its own error past it', async () => {
    const tally: ByteTally = { used: 0, maxBytes: 6 };
    const together = (): Error => new Error('together');
    expect((await collectBounded(source(['abcd']), { maxBytes: 4, tooLarge, shared: { tally, tooLarge: together } })).toString()).toBe('abcd');
    await expect(collectBounded(source(['abc']), { maxBytes: 4, tooLarge, shared: { tally, tooLarge: together } })).rejects.toThrow('together');
  });

  it('rejects with a stream\'s own error, and on a close before the end', async () => {
    const broken = Readable.from((async function* () { yield Buffer.from('ab'); throw new Error('socket closed'); })());
    await expect(collectBounded(broken, { maxBytes: 10, tooLarge })).rejects.toThrow('socket closed');
    const cut = source(['ab', 'cd']);
    const read = collectBounded(cut, { maxBytes: 10, tooLarge });
    cut.destroy();
    await expect(read).rejects.toMatchObject({ code: 'ERR_STREAM_PREMATURE_CLOSE' });
  });
});

describe('readAll', () => {
  it('reads a blob up to its expected size and refuses a larger one', async () => {
    expect((await readAll(source(['ab', 'cd']), 4)).toString()).toBe('abcd');
    await expect(readAll(source(['ab', 'cde']), 4)).rejects.toThrow('blob larger than the expected 4 bytes');
  });
});

describe('readRawBody (a caller that once let a malformed Content-Length through)', () => {
  const spec: RawBodySpec = { part: 'document', maxBytes: 4, mime: new Set(['text/plain']), oversize: 'payload_too_large' };
  const refusal = { code: 'payload_too_large', status: 413, message: "The file in 'document' is larger than 4 bytes.", extra: { param: 'document' } };

  it('refuses a body past the bound whatever its Content-Length says, and one declared past it', async () => {
    for (const header of [undefined, 'abc', '-1', '1e3', '3']) {
      await expect(readRawBody(source(['abc', 'de']), header, 'text/plain', spec), String(header)).rejects.toMatchObject(refusal);
    }
    await expect(readRawBody(source(['abcde']), '5', 'text/plain', spec)).rejects.toMatchObject(refusal);
    expect((await readRawBody(source(['abcd']), 'abc', 'text/plain', spec)).data.toString()).toBe('abcd');
  });
});
