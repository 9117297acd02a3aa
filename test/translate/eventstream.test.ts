/**
 * The AWS event-stream parser (issue 32 item 2): a ConverseStream-shaped sequence of frames decodes
 * the same however its bytes are cut (at every byte boundary, and in random pieces), a corrupt frame
 * (either checksum, an impossible length, a header past its frame) is an EventStreamError, and frames
 * reach the translators as events named by their `:event-type` (or `exception:<type>`).
 */
import fc from 'fast-check';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodeFrame, EventStreamError, EventStreamParser, toSseEvent, type EventStreamFrame } from '../../src/translate/eventstream.js';

const event = (type: string, payload: unknown) => encodeFrame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, Buffer.from(JSON.stringify(payload)));

const FRAMES = [
  event('messageStart', { role: 'assistant' }),
  event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } }),
  event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: ' wörld ✓' } }),
  event('messageStop', { stopReason: 'end_turn' }),
  event('metadata', { usage: { inputTokens: 12, outputTokens: 3, totalTokens: 15 }, metrics: { latencyMs: 100 } }),
];
const STREAM = Buffer.concat(FRAMES);

function decodeAll(pieces: Uint8Array[]): EventStreamFrame[] {
  const parser = new EventStreamParser();
  const frames = pieces.flatMap((p) => parser.push(p));
  expect(parser.pending()).toBe(false);
  return frames;
}

const EXPECTED = decodeAll([STREAM]).map(toSseEvent);

describe('AWS event-stream parser', () => {
  it('decodes a ConverseStream sequence into named events', () => {
    expect(EXPECTED.map((e) => e.event)).toEqual(['messageStart', 'contentBlockDelta', 'contentBlockDelta', 'messageStop', 'metadata']);
    expect(JSON.parse(EXPECTED[2]!.data)).toEqual({ contentBlockIndex: 0, delta: { text: ' wörld ✓' } });
    const [first] = decodeAll([FRAMES[0]!]);
    expect(first!.headers).toEqual({ ':event-type': 'messageStart', ':content-type': 'application/json', ':message-type': 'event' });
  });

  it('decodes the same frames when the bytes are cut at any one boundary', () => {
    for (let cut = 0; cut <= STREAM.length; cut++) {
      expect(decodeAll([STREAM.subarray(0, cut), STREAM.subarray(cut)]).map(toSseEvent), `cut at ${cut}`).toEqual(EXPECTED);
    }
  });

  it('decodes the same frames from random pieces, one byte each included', () => {
    expect(decodeAll([...STREAM].map((b) => Uint8Array.of(b))).map(toSseEvent)).toEqual(EXPECTED);
    fc.assert(fc.property(fc.uniqueArray(fc.integer({ min: 1, max: STREAM.length - 1 }), { maxLength: 40 }), (cuts) => {
      const points = [0, ...cuts.sort((a, b) => a - b), STREAM.length];
      const pieces = points.slice(1).map((end, i) => STREAM.subarray(points[i]!, end));
      expect(decodeAll(pieces).map(toSseEvent)).toEqual(EXPECTED);
    }), { numRuns: 200 });
  });

  it('keeps an unfinished frame pending: a stream that ends there was cut', () => {
    const parser = new EventStreamParser();
    expect(parser.push(STREAM.subarray(0, FRAMES[0]!.length + 5))).toHaveLength(1);
    expect(parser.pending()).toBe(true);
  });

  it.each([
    ['a payload byte', (b: Buffer) => flipBit(b, b.length - 6), /message checksum/],
    ['the message checksum', (b: Buffer) => flipBit(b, b.length - 1), /message checksum/],
    ['a prelude byte', (b: Buffer) => flipBit(b, 2), /prelude checksum/],
  ])('refuses a frame with %s flipped', (_what, flip, message) => {
    const bad = Buffer.from(FRAMES[1]!);
    flip(bad);
    expect(() => new EventStreamParser().push(Buffer.concat([FRAMES[0]!, bad]))).toThrow(message);
  });

  it('refuses an impossible length before buffering it, and a header running past its frame', () => {
    const huge = Buffer.alloc(12);
    huge.writeUInt32BE(64 * 1024 * 1024, 0);
    huge.writeUInt32BE(0, 4);
    huge.writeUInt32BE(crc32(huge.subarray(0, 8)), 8);
    expect(() => new EventStreamParser().push(huge)).toThrow(EventStreamError);
    // A string header claiming more bytes than the headers hold, with valid checksums.
    const lying = encodeFrame({ a: 'xy' }, Buffer.alloc(0));
    lying.writeUInt16BE(40, 12 + 1 + 1 + 1);
    refreshChecksums(lying);
    expect(() => new EventStreamParser().push(lying)).toThrow(/runs past its frame/);
  });

  it('names exception frames by their type', () => {
    const frame = encodeFrame({ ':message-type': 'exception', ':exception-type': 'throttlingException', ':content-type': 'application/json' }, Buffer.from('{"message":"slow down"}'));
    expect(decodeAll([frame]).map(toSseEvent)).toEqual([{ event: 'exception:throttlingException', data: '{"message":"slow down"}' }]);
  });

  it('decodes every header type', () => {
    const frame = encodeFrame({ yes: true, no: false, n: -7, s: 'text', b: Uint8Array.of(1, 2, 3) }, Buffer.from('x'));
    expect(decodeAll([frame])[0]!.headers).toEqual({ yes: true, no: false, n: -7, s: 'text', b: Uint8Array.of(1, 2, 3) });
  });
});

function flipBit(bytes: Buffer, at: number): void {
  bytes.writeUInt8(bytes.readUInt8(at) ^ 0x01, at);
}

/** Rewrites both checksums of a frame edited in place. */
function refreshChecksums(frame: Buffer): void {
  frame.writeUInt32BE(crc32(frame.subarray(0, 8)), 8);
  frame.writeUInt32BE(crc32(frame.subarray(0, frame.length - 4)), frame.length - 4);
}
