/**
 * Real, decodable images of any size, built in memory for the simulator's image vendors (the flex
 * image model answers the requested size, up to 2048x2048): a greyscale PNG (one deflated IDAT) and a
 * baseline greyscale JPEG whose blocks are all mid grey (DC difference 0, then end of block, each
 * coded by a one-code Huffman table: two bits a block), so a 2048x2048 JPEG is about 16 KB.
 */
import { deflateSync } from 'node:zlib';
import { crc32 } from './zip-writer.js';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** An 8-bit greyscale PNG of `width` x `height` pixels, every pixel `shade`. */
export function grayPng(width: number, height: number, shade = 0x80): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 0, 0, 0, 0], 8);
  const rows = Buffer.alloc((width + 1) * height, shade & 0xff);
  for (let y = 0; y < height; y++) rows[y * (width + 1)] = 0;
  return Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', ihdr), pngChunk('IDAT', deflateSync(rows)), pngChunk('IEND', Buffer.alloc(0))]);
}

/** A JPEG marker segment: FF, the marker, the big-endian length (itself included), the payload. */
function segment(marker: number, payload: readonly number[]): Buffer {
  const length = payload.length + 2;
  return Buffer.from([0xff, marker, length >> 8, length & 0xff, ...payload]);
}

/** A one-code Huffman table (code `0`, length 1) for `symbol`, in table class `tableClass` (0 DC, 1 AC). */
const oneCodeTable = (tableClass: number, symbol: number): Buffer => segment(0xc4, [tableClass << 4, 1, ...new Array<number>(15).fill(0), symbol]);

/** A baseline greyscale JPEG of `width` x `height` pixels (sides up to 65535), every pixel mid grey. */
export function grayJpeg(width: number, height: number): Buffer {
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  // Two zero bits per block; the last partial byte is padded with one bits (never a whole 0xFF byte).
  const bits = blocks * 2;
  const scan = Buffer.alloc(Math.ceil(bits / 8), 0);
  if (bits % 8 !== 0) scan[scan.length - 1] = 0xff >> (bits % 8);
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, [0x4a, 0x46, 0x49, 0x46, 0x00, 1, 1, 0, 0, 1, 0, 1, 0, 0]),
    segment(0xdb, [0x00, ...new Array<number>(64).fill(1)]),
    segment(0xc0, [8, height >> 8, height & 0xff, width >> 8, width & 0xff, 1, 1, 0x11, 0]),
    oneCodeTable(0, 0x00), oneCodeTable(1, 0x00),
    segment(0xda, [1, 1, 0x00, 0, 63, 0]),
    scan,
    Buffer.from([0xff, 0xd9]),
  ]);
}
