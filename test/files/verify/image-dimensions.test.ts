/**
 * The image size reader (src/files/verify/dimensions.ts), as the flex image model's billing uses it
 * (spec 4.14: the ACTUAL returned image is billed): PNG from IHDR, JPEG from its first start-of-frame
 * marker (SOF0..SOF15 but DHT, JPG and DAC), walking APPn and DQT segments first. Truncated or garbled
 * bytes are null (the caller's 502), never a crash.
 */
import { describe, expect, it } from 'vitest';
import { imageDimensions } from '../../../src/files/verify/dimensions.js';
import { grayJpeg, grayPng } from '../../../src/sim/gray-images.js';

/** A JPEG whose frame header uses `marker` (a progressive SOF2, say) after an APP1 segment. */
function jpegWith(marker: number, width: number, height: number): Buffer {
  const app1 = Buffer.from([0xff, 0xe1, 0x00, 0x08, 0x45, 0x78, 0x69, 0x66, 0x00, 0x00]);
  const sof = Buffer.from([0xff, marker, 0x00, 0x0b, 8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app1, sof, Buffer.from([0xff, 0xd9])]);
}

/** A RIFF/WEBP file with one chunk of `type` holding `payload` (padded to the reader's minimum length). */
function webp(type: string, payload: Buffer): Buffer {
  const padded = Buffer.concat([payload, Buffer.alloc(Math.max(0, 14 - payload.length))]);
  const chunk = Buffer.concat([Buffer.from(type, 'latin1'), Buffer.from([padded.length, 0, 0, 0]), padded]);
  const body = Buffer.concat([Buffer.from('WEBP', 'latin1'), chunk]);
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), Buffer.from([body.length, 0, 0, 0]), body]);
}

describe('imageDimensions of WebP (spec 4.16 reference images)', () => {
  it('reads lossless (VP8L), lossy (VP8) and extended (VP8X) headers', () => {
    // VP8L: signature 0x2f, then 14-bit width-1 and height-1, little-endian.
    const bits = (1280 - 1) | ((720 - 1) << 14);
    const lossless = Buffer.alloc(5);
    lossless[0] = 0x2f;
    lossless.writeUInt32LE(bits, 1);
    expect(imageDimensions(webp('VP8L', lossless))).toEqual({ width: 1280, height: 720 });
    // VP8: frame tag (3 bytes), start code 9d 01 2a, then 14-bit width and height.
    const lossy = Buffer.from([0, 0, 0, 0x9d, 0x01, 0x2a, 0, 0, 0, 0]);
    lossy.writeUInt16LE(720, 6);
    lossy.writeUInt16LE(1280, 8);
    expect(imageDimensions(webp('VP8 ', lossy))).toEqual({ width: 720, height: 1280 });
    // VP8X: flags and reserved (4 bytes), then 24-bit width-1 and height-1.
    const extended = Buffer.alloc(10);
    extended.writeUIntLE(1792 - 1, 4, 3);
    extended.writeUIntLE(1024 - 1, 7, 3);
    expect(imageDimensions(webp('VP8X', extended))).toEqual({ width: 1792, height: 1024 });
  });

  it('is null for a wrong signature or an unknown chunk', () => {
    expect(imageDimensions(webp('VP8L', Buffer.from([0x2e, 1, 2, 3, 4])))).toBeNull();
    expect(imageDimensions(webp('VP8 ', Buffer.from([0, 0, 0, 0x9d, 0x01, 0x2b, 1, 0, 1, 0])))).toBeNull();
    expect(imageDimensions(webp('ALPH', Buffer.alloc(10)))).toBeNull();
  });
});

describe('imageDimensions', () => {
  it('reads PNG and JPEG sizes, including non-square and odd ones', () => {
    for (const [w, h] of [[1024, 1024], [1040, 1024], [64, 2048], [13, 7]] as const) {
      expect(imageDimensions(grayPng(w, h))).toEqual({ width: w, height: h });
      expect(imageDimensions(grayJpeg(w, h))).toEqual({ width: w, height: h });
    }
  });

  it('finds the frame under any SOF marker, skipping DHT (C4), JPG (C8) and DAC (CC)', () => {
    for (const marker of [0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc7, 0xc9, 0xcb, 0xcd, 0xcf]) expect(imageDimensions(jpegWith(marker, 300, 200))).toEqual({ width: 300, height: 200 });
    for (const marker of [0xc4, 0xc8, 0xcc]) expect(imageDimensions(jpegWith(marker, 300, 200))).toBeNull();
  });

  it('is null, never a throw, for truncated, garbled or empty input, and for a zero side', () => {
    const png = grayPng(100, 50);
    const jpeg = grayJpeg(100, 50);
    for (let cut = 0; cut < 40; cut++) {
      expect(() => imageDimensions(png.subarray(0, cut))).not.toThrow();
      expect(() => imageDimensions(jpeg.subarray(0, cut))).not.toThrow();
    }
    expect(imageDimensions(png.subarray(0, 20))).toBeNull();
    expect(imageDimensions(jpeg.subarray(0, 30))).toBeNull(); // cut inside the DQT segment, before the frame
    expect(imageDimensions(Buffer.alloc(0))).toBeNull();
    expect(imageDimensions(Buffer.from('not an image at all, just text'))).toBeNull();
    const garbled = Buffer.from(jpeg);
    garbled[2] = 0x00; // the first marker is no marker
    expect(imageDimensions(garbled)).toBeNull();
    expect(imageDimensions(jpegWith(0xc0, 0, 200))).toBeNull();
    for (let i = 0; i < 200; i++) {
      const noise = Buffer.from(Array.from({ length: 64 }, (_, k) => (i * 31 + k * 17) & 0xff));
      noise[0] = 0xff; noise[1] = 0xd8;
      expect(() => imageDimensions(noise)).not.toThrow();
    }
  });
});

describe('imageDimensions of GIF and BMP (inline images held to an operation\'s pixel limits)', () => {
  it('reads the GIF logical screen and the BMP info header, a top-down bitmap by its absolute height', () => {
    expect(imageDimensions(Buffer.from('GIF87a\x40\x01\xf0\x00', 'latin1'))).toEqual({ width: 320, height: 240 });
    const bmp = Buffer.alloc(26);
    bmp.write('BM', 0, 'latin1');
    bmp.writeInt32LE(300, 18);
    bmp.writeInt32LE(-200, 22);
    expect(imageDimensions(bmp)).toEqual({ width: 300, height: 200 });
  });

  it('is null for truncated headers and for a zero side', () => {
    expect(imageDimensions(Buffer.from('GIF89a\x40', 'latin1'))).toBeNull();
    expect(imageDimensions(Buffer.from('BM\0\0', 'latin1'))).toBeNull();
    expect(imageDimensions(Buffer.from('GIF89a\x00\x00\x30\x00', 'latin1'))).toBeNull();
  });
});
