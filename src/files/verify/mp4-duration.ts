/**
 * The duration of an MP4 (ISO base media file) from its movie header (`moov/mvhd`: duration over
 * timescale), read from the box structure without decoding: a finished video is billed by the
 * seconds it actually has (spec 4.16). Audio libraries read the duration of audio tracks only, and a
 * video may have none. Pure; null when the bytes hold no readable movie header.
 */

interface Box { type: string; start: number; end: number }

/** The boxes directly inside `[from, to)`; stops at the first malformed box. */
function boxes(b: Buffer, from: number, to: number): Box[] {
  const found: Box[] = [];
  let at = from;
  while (at + 8 <= to) {
    let size = b.readUInt32BE(at);
    let header = 8;
    if (size === 1) {
      if (at + 16 > to) break;
      const large = b.readBigUInt64BE(at + 8);
      if (large > BigInt(to - at)) break;
      size = Number(large);
      header = 16;
    } else if (size === 0) {
      size = to - at;
    }
    if (size < header || at + size > to) break;
    found.push({ type: b.toString('latin1', at + 4, at + 8), start: at + header, end: at + size });
    at += size;
  }
  return found;
}

/**
 * True when the file's top-level boxes tile it exactly. A file cut short ends inside its last box
 * (the media data, usually), even when its movie header, written first, is whole.
 */
export function mp4IsWhole(bytes: Buffer): boolean {
  const top = boxes(bytes, 0, bytes.length);
  return top.length > 0 && top.at(-1)!.end === bytes.length;
}

/** Seconds of the movie (the mvhd duration over its timescale), or null. */
export function mp4DurationSeconds(bytes: Buffer): number | null {
  const moov = boxes(bytes, 0, bytes.length).find((x) => x.type === 'moov');
  const mvhd = moov && boxes(bytes, moov.start, moov.end).find((x) => x.type === 'mvhd');
  if (!mvhd) return null;
  const version = bytes[mvhd.start];
  const wide = version === 1;
  const need = wide ? 32 : 20;
  if (mvhd.end - mvhd.start < need) return null;
  const timescale = bytes.readUInt32BE(mvhd.start + (wide ? 20 : 12));
  const duration = wide ? Number(bytes.readBigUInt64BE(mvhd.start + 24)) : bytes.readUInt32BE(mvhd.start + 16);
  // All ones: "duration unknown" (ISO/IEC 14496-12 8.2.2.3).
  const unknown = wide ? bytes.readBigUInt64BE(mvhd.start + 24) === 0xffffffffffffffffn : duration === 0xffffffff;
  if (timescale === 0 || unknown || duration === 0) return null;
  return duration / timescale;
}
