/**
 * A real baseline JPEG of any size built in memory (one mid-grey component), for the routes that take
 * JPEG images (spec 4.12 vision). The same construction as test/fixtures/files/make-fixtures.py's 8 x 8
 * sample, over every 8 x 8 block: each block is a DC difference of 0 and an end of block, two 1-bit
 * Huffman codes, so the scan is all zero bits (padded with ones) and no byte needs stuffing.
 */

function segment(marker: number, body: Buffer): Buffer {
  const head = Buffer.from([0xff, marker, 0, 0]);
  head.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([head, body]);
}

/** A grey JPEG of `width` x `height` pixels (each 1 to 65535). */
export function jpeg(width: number, height: number): Buffer {
  const sof = Buffer.from([8, 0, 0, 0, 0, 1, 1, 0x11, 0]);
  sof.writeUInt16BE(height, 1);
  sof.writeUInt16BE(width, 3);
  // One code of length 1 for symbol 0x00: DC "difference 0" and AC "end of block".
  const oneCode = Buffer.from([1, ...new Array<number>(15).fill(0), 0]);
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8);
  const bits = blocks * 2;
  const scan = Buffer.alloc(Math.ceil(bits / 8), 0);
  if (bits % 8 !== 0) scan[scan.length - 1] = 0xff >> (bits % 8); // pad the last byte with 1 bits
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, Buffer.from('JFIF\u0000\u0001\u0001\u0000\u0000\u0001\u0000\u0001\u0000\u0000', 'latin1')),
    segment(0xdb, Buffer.concat([Buffer.from([0]), Buffer.alloc(64, 1)])),
    segment(0xc0, sof),
    segment(0xc4, Buffer.concat([Buffer.from([0x00]), oneCode])),
    segment(0xc4, Buffer.concat([Buffer.from([0x10]), oneCode])),
    segment(0xda, Buffer.from([1, 1, 0x00, 0, 0x3f, 0])),
    scan,
    Buffer.from([0xff, 0xd9]),
  ]);
}
