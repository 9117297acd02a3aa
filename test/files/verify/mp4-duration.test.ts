/** The MP4 movie-header duration (spec 4.16: a video is billed by the seconds it actually has). */
import { describe, expect, it } from 'vitest';
import { mp4DurationSeconds, mp4IsWhole } from '../../../src/files/verify/mp4-duration.js';
import { simMp4 } from '../../../src/sim/mp4.js';

function box(type: string, body: Buffer): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

/** An mvhd of version 1 (64-bit times and duration). */
function mvhdV1(timescale: number, duration: bigint): Buffer {
  const b = Buffer.alloc(112);
  b[0] = 1;
  b.writeUInt32BE(timescale, 20);
  b.writeBigUInt64BE(duration, 24);
  return box('mvhd', b);
}

describe('mp4DurationSeconds', () => {
  it('reads the duration of a version 0 movie header to the millisecond', () => {
    expect(mp4DurationSeconds(simMp4(8))).toBe(8);
    expect(mp4DurationSeconds(simMp4(6.5))).toBe(6.5);
    expect(mp4DurationSeconds(simMp4(7.999))).toBe(7.999);
  });

  it('reads version 1 headers, and boxes with a 64-bit size', () => {
    const moov = box('moov', mvhdV1(90_000, 1_080_000n));
    expect(mp4DurationSeconds(Buffer.concat([box('ftyp', Buffer.from('isom')), moov]))).toBe(12);
    const large = Buffer.alloc(16);
    large.writeUInt32BE(1);
    large.write('free', 4, 'latin1');
    large.writeBigUInt64BE(16n, 8);
    expect(mp4DurationSeconds(Buffer.concat([large, moov]))).toBe(12);
  });

  it('is null without a readable movie header, for an unknown duration and for a zero timescale', () => {
    expect(mp4DurationSeconds(Buffer.alloc(0))).toBeNull();
    expect(mp4DurationSeconds(Buffer.from('not an mp4 at all'))).toBeNull();
    expect(mp4DurationSeconds(simMp4(4).subarray(0, 40))).toBeNull();
    expect(mp4DurationSeconds(box('moov', mvhdV1(0, 10n)))).toBeNull();
    expect(mp4DurationSeconds(box('moov', mvhdV1(1000, 0xffffffffffffffffn)))).toBeNull();
    const lying = box('moov', mvhdV1(1000, 5000n));
    lying.writeUInt32BE(0xffff, 0);
    expect(mp4DurationSeconds(lying)).toBeNull();
  });
});

describe('mp4IsWhole', () => {
  it('is true when the top-level boxes end exactly at the end of the file', () => {
    expect(mp4IsWhole(simMp4(8))).toBe(true);
    expect(mp4IsWhole(Buffer.concat([box('ftyp', Buffer.from('isom')), box('moov', mvhdV1(1000, 5000n))]))).toBe(true);
  });

  it('is false for a file cut short (its movie header whole), extra bytes after the last box, or no box', () => {
    const whole = simMp4(8);
    expect(mp4DurationSeconds(whole.subarray(0, whole.length - 1))).toBe(8);
    expect(mp4IsWhole(whole.subarray(0, whole.length - 1))).toBe(false);
    expect(mp4IsWhole(Buffer.concat([whole, Buffer.from([0, 0, 0])]))).toBe(false);
    expect(mp4IsWhole(Buffer.alloc(0))).toBe(false);
    expect(mp4IsWhole(Buffer.from('not an mp4 at all'))).toBe(false);
  });
});
