/**
 * HTTP byte ranges (RFC 9110 section 14) for the gateway's hosted files: hosted video supports
 * byte-range playback (spec 4.16). One range per request; a list of ranges or a malformed header is
 * ignored (the whole file is sent, as RFC 9110 allows), a range past the end is 416.
 */
import type { ByteRange } from './blob/types.js';

/** What a `Range` header asks of a file of `size` bytes. */
export type RangeRequest =
  | { kind: 'whole' }
  | { kind: 'partial'; range: ByteRange }
  | { kind: 'unsatisfiable' };

const SINGLE = /^bytes=(\d*)-(\d*)$/;

/** Parses `Range` against the file's size: `bytes=a-b`, `bytes=a-` (to the end) or `bytes=-n` (the last n). */
export function parseRange(header: string | undefined, size: number): RangeRequest {
  if (header === undefined) return { kind: 'whole' };
  const match = SINGLE.exec(header.trim());
  if (!match || (match[1] === '' && match[2] === '')) return { kind: 'whole' };
  const [first, last] = [match[1]!, match[2]!];
  if (first === '') {
    // A suffix: the last n bytes (all of a shorter file); zero bytes cannot be served.
    const length = Number(last);
    if (length === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', range: { start: Math.max(0, size - length), end: size - 1 } };
  }
  const start = Number(first);
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (last !== '' && Number(last) < start) return { kind: 'whole' };
  if (start >= size) return { kind: 'unsatisfiable' };
  return { kind: 'partial', range: { start, end } };
}

/** `Content-Range` of a partial answer: `bytes start-end/size`. */
export function contentRange(range: ByteRange, size: number): string {
  return `bytes ${range.start}-${range.end}/${size}`;
}
