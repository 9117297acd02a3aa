/**
 * A minimal, well-formed MP4 for the simulator's videos (spec 4.16): `ftyp`, a `moov` whose movie
 * header (`mvhd`) states the duration, and an `mdat` of filler bytes. Players would find no track, but
 * the gateway reads the duration from exactly this header (src/files/verify/mp4-duration.ts).
 */

function box(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

/** mvhd version 0 with a 1 ms timescale: creation and modification 0, rate 1.0, volume 1.0, identity matrix. */
function movieHeader(milliseconds: number): Buffer {
  const b = Buffer.alloc(100);
  b.writeUInt32BE(1000, 12);
  b.writeUInt32BE(milliseconds, 16);
  b.writeUInt32BE(0x00010000, 20);
  b.writeUInt16BE(0x0100, 24);
  [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000].forEach((v, i) => b.writeUInt32BE(v, 36 + i * 4));
  b.writeUInt32BE(2, 96);
  return box('mvhd', b);
}

/** An MP4 of `seconds` (to the millisecond) and `fillerBytes` of media data. */
export function simMp4(seconds: number, fillerBytes = 4096): Buffer {
  const ftyp = box('ftyp', Buffer.from('isom'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2mp41'));
  return Buffer.concat([ftyp, box('moov', movieHeader(Math.round(seconds * 1000))), box('mdat', Buffer.alloc(fillerBytes, 0x42))]);
}
