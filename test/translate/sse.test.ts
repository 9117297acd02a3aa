/** The one SSE parser: framing rules and arbitrary chunk boundaries. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SseParser, formatSse } from '../../src/translate/sse.js';

const STREAM = 'event: message_start\ndata: {"a":1}\n\n: comment\r\ndata: line1\r\ndata: line2\r\n\r\nid: 7\ndata:no-space\n\ndata: [DONE]\n\n';
const EXPECTED = [
  { event: 'message_start', data: '{"a":1}' },
  { data: 'line1\nline2' },
  { data: 'no-space', id: '7' },
  { data: '[DONE]', id: '7' },
];

describe('SseParser', () => {
  it('parses events, comments, CRLF, multi-line data and ids', () => {
    expect(new SseParser().push(STREAM)).toEqual(EXPECTED);
  });

  it('dispatches an empty data line as empty data, nothing for an event without data, and starts each event afresh', () => {
    const events = new SseParser().push('data:\n\nevent: ping\n\ndata: a\ndata: b\ndata: c\n\ndata: d\n\ndata: e\ndata:\n\n');
    expect(events).toEqual([{ data: '' }, { data: 'a\nb\nc' }, { data: 'd' }, { data: 'e\n' }]);
  });

  it('ignores one byte-order mark opening the stream, and only there', () => {
    const parser = new SseParser();
    expect([...parser.push('\uFEFF'), ...parser.push('data: a\n\n'), ...parser.push('\uFEFFdata: b\n\n')]).toEqual([{ data: 'a' }]);
    expect(new SseParser().push('\uFEFFdata: x\n\n')).toEqual([{ data: 'x' }]);
  });

  it('gives the same events whatever the chunk boundaries', () => {
    for (let size = 1; size <= 7; size++) {
      const parser = new SseParser();
      const out = [];
      for (let i = 0; i < STREAM.length; i += size) out.push(...parser.push(STREAM.slice(i, i + size)));
      expect(out, `chunks of ${size}`).toEqual(EXPECTED);
    }
  });

  it('gives the same events for a stream with long lines cut anywhere (each line kept whole across its pieces)', () => {
    const long = 'x'.repeat(5000);
    const text = `${STREAM}data: ${long}\r\ndata: ${long}y\r\rdata: z\n\n`;
    const expected = [...EXPECTED, { data: `${long}\n${long}y`, id: '7' }, { data: 'z', id: '7' }]; // the last event id stays
    const cuts = fc.uniqueArray(fc.integer({ min: 1, max: text.length - 1 }), { maxLength: 60 }).map((at) => at.sort((a, b) => a - b));
    fc.assert(fc.property(cuts, (at) => {
      const parser = new SseParser();
      const out = [];
      for (const [i, from] of [0, ...at].entries()) out.push(...parser.push(text.slice(from, at[i] ?? text.length)));
      expect(out).toEqual(expected);
      expect(parser.hasPartial).toBe(false);
    }), { numRuns: 300 });
  });

  it('handles a CR at a chunk end followed by LF in the next chunk', () => {
    const parser = new SseParser();
    expect(parser.push('data: x\r')).toEqual([]);
    expect(parser.push('\n\r\n')).toEqual([{ data: 'x' }]);
  });

  it('ends lines at a lone CR, whatever the chunk boundaries', () => {
    const text = 'data: a\rdata: b\r\rdata: c\n\r\n';
    for (let size = 1; size <= text.length; size++) {
      const parser = new SseParser();
      const out = [];
      for (let i = 0; i < text.length; i += size) out.push(...parser.push(text.slice(i, i + size)));
      expect(out, `chunks of ${size}`).toEqual([{ data: 'a\nb' }, { data: 'c' }]);
    }
  });

  it('reports a partial event left when a stream is cut', () => {
    const parser = new SseParser();
    parser.push('data: {"half":');
    expect(parser.hasPartial).toBe(true);
  });

  it('frames events back to the wire', () => {
    expect(formatSse('a\nb', 'ping')).toBe('event: ping\ndata: a\ndata: b\n\n');
    expect(new SseParser().push(formatSse('{"x":1}'))).toEqual([{ data: '{"x":1}' }]);
  });
});
