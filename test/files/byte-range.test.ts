/** RFC 9110 single byte ranges against a file size (spec 4.16: hosted video plays by ranges). */
import { describe, expect, it } from 'vitest';
import { contentRange, parseRange } from '../../src/files/byte-range.js';

describe('parseRange', () => {
  it.each([
    ['bytes=0-99', 1000, { start: 0, end: 99 }],
    ['bytes=100-', 1000, { start: 100, end: 999 }],
    ['bytes=-100', 1000, { start: 900, end: 999 }],
    ['bytes=-5000', 1000, { start: 0, end: 999 }],
    ['bytes=990-5000', 1000, { start: 990, end: 999 }],
    ['bytes=999-999', 1000, { start: 999, end: 999 }],
    [' bytes=0-0 ', 1000, { start: 0, end: 0 }],
  ])('%s of %i bytes is a partial answer', (header, size, range) => {
    expect(parseRange(header, size)).toEqual({ kind: 'partial', range });
  });

  it.each([
    ['bytes=1000-', 1000], ['bytes=1000-1001', 1000], ['bytes=-0', 1000], ['bytes=0-', 0], ['bytes=-1', 0],
  ])('%s of %i bytes is unsatisfiable', (header, size) => {
    expect(parseRange(header, size)).toEqual({ kind: 'unsatisfiable' });
  });

  it.each([
    undefined, '', 'bytes=', 'bytes=-', 'bytes=0-1,5-9', 'items=0-9', 'bytes=9-0', 'bytes=a-b', 'bytes=1.5-2',
  ])('%s is ignored: the whole file is sent', (header) => {
    expect(parseRange(header, 1000)).toEqual({ kind: 'whole' });
  });

  it('names the range and the size in Content-Range', () => {
    expect(contentRange({ start: 5, end: 9 }, 10)).toBe('bytes 5-9/10');
  });
});
