/** Small valid images built in memory, for the routes that take one (spec 4.11, 4.12) and their fixtures. */
import { deflateSync } from 'node:zlib';
import { crc32 } from '../../src/sim/zip-writer.js';

/** A grey RGB PNG of `width` x `height` pixels whose pixel value is `seed` (so different seeds are different images). */
export function png(width: number, height: number, seed = 0): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.alloc(8);
    head.writeUInt32BE(data.length, 0);
    head.write(type, 4, 'latin1');
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
    return Buffer.concat([head, data, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.alloc((width * 3 + 1) * height, seed & 0xff);
  for (let y = 0; y < height; y++) rows[y * (width * 3 + 1)] = 0;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', ihdr), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/** A GIF89a header of `width` x `height` pixels (enough for a magic-byte and size check, not a full image). */
export function gifHeader(width: number, height: number): Buffer {
  const b = Buffer.alloc(13);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(width, 6);
  b.writeUInt16LE(height, 8);
  return b;
}

/**
 * A WebP container (RIFF, WEBP, a VP8L chunk) whose every byte is below 0x80, so it crosses Prism's
 * proxy intact (it mangles bytes above 0x7f, and PNG and JPEG magic bytes are); enough for the
 * gateway's magic-byte check (`probe: image`) and the simulator, which do not decode images. Not a
 * decodable picture: use png() wherever the bytes go nowhere near Prism's proxy.
 */
export function sevenBitWebpContainer(): Buffer {
  const payload = Buffer.from([0x2f, 0x00, 0x00, 0x00, 0x00, 0x07, 0x10, 0x11, 0x11, 0x08, 0x08, 0x07]);
  const chunk = Buffer.concat([Buffer.from('VP8L', 'latin1'), Buffer.from([payload.length, 0, 0, 0]), payload]);
  const body = Buffer.concat([Buffer.from('WEBP', 'latin1'), chunk]);
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), Buffer.from([body.length, 0, 0, 0]), body]);
}
